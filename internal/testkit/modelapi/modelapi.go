// Package modelapi is a local stand-in for the model APIs the agent CLIs call, for
// tests that run the real CLIs: Anthropic's Messages API (Claude Code) and OpenAI's
// Responses API (Codex), both streamed as server-sent events, on a loopback
// httptest server.
//
// The test scripts the model's answers in order: each request the CLI makes for its
// conversation takes the next Reply (a shell command to run through the CLI's own
// shell tool, or a text answer). The side requests Claude Code makes besides the
// conversation (a title, a quota probe, token counts) are answered with a short text
// and take nothing from the script. Every request is recorded, so a test can assert
// what the CLI sent: the prompt, the tool results, the model.
package modelapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted answer of the model.
type Reply struct {
	// Command, when set, makes the answer a call of the CLI's shell tool (Claude
	// Code's Bash, Codex's shell) running this command.
	Command string
	// Text is the answer's text (after the tool call, if any).
	Text string
	// Hold, when set, is waited on (closed) before the answer is sent; the request's
	// end (the CLI stopped) ends the wait too.
	Hold <-chan struct{}
}

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	// Main is true for a conversation request (it took a Reply).
	Main bool
}

// JSON decodes the body into v.
func (r Request) JSON(v any) error { return json.Unmarshal(r.Body, v) }

// Server is the stand-in. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	mu       sync.Mutex
	script   []Reply
	requests []Request
	seq      int
	// closing ends every Hold when the test ends, so closing the server never waits
	// on one.
	closing chan struct{}
}

// New starts a server on loopback, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{closing: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("/", s.other)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.closing)
		srv.Close()
	})
	s.URL = srv.URL
	return s
}

// Script appends answers to the ones still to be given.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Requests is every request so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Main is the conversation requests so far, in order.
func (s *Server) Main() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

// ToolResults is the text of every tool result the CLI sent back (Claude Code's
// tool_result blocks, Codex's function_call_output items), in order. Each request
// repeats the conversation so far; a result is counted once, by its tool use id.
func (s *Server) ToolResults() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range s.Main() {
		read := codexToolResults
		if r.Path == "/v1/messages" {
			read = claudeToolResults
		}
		ids, texts := read(r)
		for i, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, texts[i])
			}
		}
	}
	return out
}

// Drop discards the answers not yet given (a stopped turn's), so the next request
// takes what is scripted after.
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = nil
}

// record reads the request's body and keeps it; a conversation request (main says
// which, from the body) takes the next reply, false when none is left.
func (s *Server) record(r *http.Request, main func(body []byte) bool) (Request, Reply, bool) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Main: main != nil && main(body)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if !req.Main {
		return req, Reply{}, true
	}
	if len(s.script) == 0 {
		return req, Reply{}, false
	}
	next := s.script[0]
	s.script = s.script[1:]
	return req, next, true
}

// id is a fresh identifier with a prefix.
func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s_%024d", prefix, s.seq)
}

func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	http.NotFound(w, r)
}

// hold waits for the reply's Hold, the request's end or the test's; false unless the
// Hold was released.
func (s *Server) hold(ctx context.Context, rep Reply) bool {
	if rep.Hold == nil {
		return true
	}
	select {
	case <-rep.Hold:
		return true
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	}
}

// unscripted answers a conversation request the test did not script with an API
// error (body, the API's error shape) the CLI reports, so the test sees what was
// asked rather than hanging.
func unscripted(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, body)
}

// noScript is the message of the unscripted answer.
const noScript = "modelapi: no scripted answer left for this request"

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

func (e sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	_, _ = fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// chunks cuts s into pieces, as a model's stream does, so the CLI's delta handling
// is exercised.
func chunks(s string) []string {
	const n = 16
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// ContainsText reports whether the request's body mentions s (as JSON text, so
// quotes and newlines in s are matched escaped).
func (r Request) ContainsText(s string) bool {
	b, _ := json.Marshal(s)
	return strings.Contains(string(r.Body), strings.Trim(string(b), `"`))
}
