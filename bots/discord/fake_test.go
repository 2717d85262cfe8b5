package discord_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The fake Discord: the REST routes the bot uses and a gateway websocket, speaking
// Discord's wire format (JSON bodies and errors, gateway opcodes). discordgo reaches it
// through its http.Client, whose transport sends every request (discord.com,
// cdn.discordapp.com) here, which also redirects the gateway discovery; nothing
// process-wide is changed, so tests run in parallel.

const (
	botID    = "900000000000000001"
	appID    = "900000000000000002"
	guildID  = "910000000000000001"
	channel  = "920000000000000001"
	humanID  = "930000000000000001"
	roleDevs = "940000000000000001"
)

// post is a message the bot created.
type post struct {
	Channel, Content string
	// ID is the message's; Components its components as sent (JSON, "" for none).
	ID, Components string
	At             time.Time
	// NoPings: the post allowed no mentions.
	NoPings bool
	// Files are the post's attachments by file name.
	Files map[string][]byte
}

type fakeDiscord struct {
	srv *httptest.Server
	t   testing.TB

	mu        sync.Mutex
	posts     []post
	threads   map[string]string // thread id -> parent channel
	joined    []string
	acks      map[string]int    // interaction id -> response type
	responses map[string]string // interaction id -> the response's data (JSON)
	edits     []post            // message edits (PATCH), by message id
	originals map[string]string // interaction token -> content of @original
	// origComponents are the components an edit of @original set ("" when it left them).
	origComponents map[string]string
	origIDs        map[string]string // interaction token -> @original's message id
	files          map[string][]byte
	// failPost, when set, answers a POST of a message instead of creating it.
	failPost  func(w http.ResponseWriter, n int) bool
	postCalls int

	conn   *websocket.Conn
	connMu sync.Mutex
	ready  chan struct{}
	seq    atomic.Int64
	nextID atomic.Int64
}

func newFakeDiscord(t testing.TB) *fakeDiscord {
	f := &fakeDiscord{t: t, threads: map[string]string{}, acks: map[string]int{}, responses: map[string]string{}, originals: map[string]string{}, origComponents: map[string]string{},
		origIDs: map[string]string{}, files: map[string][]byte{}, ready: make(chan struct{})}
	f.nextID.Store(950000000000000000)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.connMu.Lock()
		if f.conn != nil {
			f.conn.Close()
		}
		f.connMu.Unlock()
		f.srv.Close()
	})
	return f
}

// Client is the http.Client the bot is given.
func (f *fakeDiscord) Client() *http.Client {
	u, _ := url.Parse(f.srv.URL)
	return &http.Client{Transport: redirect{host: u.Host}, Timeout: 10 * time.Second}
}

type redirect struct{ host string }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = "http", r.host, ""
	return http.DefaultTransport.RoundTrip(req)
}

func (f *fakeDiscord) id() string { return fmt.Sprint(f.nextID.Add(1)) }

var apiPrefix = regexp.MustCompile(`^/api/v\d+`)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError answers as Discord does: a status and {"code", "message"}.
func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

func (f *fakeDiscord) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/gateway-ws") { // discordgo adds a trailing slash
		f.gateway(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/attachments/") {
		f.mu.Lock()
		data, ok := f.files[strings.TrimPrefix(r.URL.Path, "/attachments/")]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
		return
	}
	if r.Header.Get("Authorization") != "Bot "+botToken && !strings.HasPrefix(r.URL.Path, "/api/v9/webhooks/") {
		apiError(w, 401, 0, "401: Unauthorized")
		return
	}
	path := apiPrefix.ReplaceAllString(r.URL.Path, "")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == "GET" && path == "/gateway":
		writeJSON(w, 200, map[string]string{"url": "ws://" + r.Host + "/gateway-ws"})
	case r.Method == "GET" && path == "/users/@me":
		writeJSON(w, 200, map[string]any{"id": botID, "username": "wshub", "bot": true})
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		f.createMessage(w, parts[1], r.Header.Get("Content-Type"), body)
	case r.Method == "POST" && len(parts) == 5 && parts[0] == "channels" && parts[4] == "threads":
		f.startThread(w, parts[1], parts[3], body)
	case r.Method == "PUT" && len(parts) == 4 && parts[2] == "thread-members" && parts[3] == "@me":
		f.mu.Lock()
		f.joined = append(f.joined, parts[1])
		f.mu.Unlock()
		w.WriteHeader(204)
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		f.editMessage(w, parts[1], parts[3], body)
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		f.getChannel(w, parts[1])
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		var resp struct {
			Type int             `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(body, &resp)
		f.mu.Lock()
		f.acks[parts[1]] = resp.Type
		f.responses[parts[1]] = string(resp.Data)
		f.mu.Unlock()
		w.WriteHeader(204)
	case r.Method == "PATCH" && len(parts) == 5 && parts[0] == "webhooks" && parts[4] == "@original":
		f.editOriginal(w, parts[2], body)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "applications" && parts[2] == "commands":
		writeJSON(w, 201, json.RawMessage(body))
	default:
		apiError(w, 404, 0, "404: Not Found "+r.Method+" "+path)
	}
}

// createMessage is POST /channels/{channel}/messages
// (https://discord.com/developers/docs/resources/message#create-message): a JSON
// body, or multipart/form-data with the JSON in payload_json and the attachments as
// files[n] parts.
func (f *fakeDiscord) createMessage(w http.ResponseWriter, channelID, contentType string, body []byte) {
	f.mu.Lock()
	f.postCalls++
	n, fail := f.postCalls, f.failPost
	f.mu.Unlock()
	if fail != nil && fail(w, n) {
		return
	}
	var files map[string][]byte
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && mt == "multipart/form-data" {
		raw := body
		body, files = nil, map[string][]byte{}
		mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			data, _ := io.ReadAll(part)
			if part.FormName() == "payload_json" {
				body = data
			} else if strings.HasPrefix(part.FormName(), "files[") {
				files[part.FileName()] = data
			}
		}
	}
	var m struct {
		Content         string          `json:"content"`
		AllowedMentions json.RawMessage `json:"allowed_mentions"`
		Components      json.RawMessage `json:"components"`
	}
	_ = json.Unmarshal(body, &m)
	var am struct {
		Parse []string `json:"parse"`
	}
	noPings := m.AllowedMentions != nil && json.Unmarshal(m.AllowedMentions, &am) == nil && len(am.Parse) == 0
	id := f.id()
	f.mu.Lock()
	f.posts = append(f.posts, post{Channel: channelID, Content: m.Content, NoPings: noPings, ID: id,
		Components: components(m.Components), At: time.Now(), Files: files})
	f.mu.Unlock()
	writeJSON(w, 200, map[string]any{"id": id, "channel_id": channelID, "content": m.Content,
		"author": map[string]any{"id": botID, "bot": true}})
}

// components is a message's components as sent, "" for none.
func components(raw json.RawMessage) string {
	if s := string(raw); s != "null" && s != "[]" {
		return s
	}
	return ""
}

// editMessage is PATCH /channels/{channel}/messages/{message}
// (https://discord.com/developers/docs/resources/message#edit-message): only the
// bot's own messages, which this fake knows.
func (f *fakeDiscord) editMessage(w http.ResponseWriter, channelID, messageID string, body []byte) {
	var m struct {
		Content    string          `json:"content"`
		Components json.RawMessage `json:"components"`
	}
	_ = json.Unmarshal(body, &m)
	f.mu.Lock()
	defer f.mu.Unlock()
	known := false
	for _, p := range f.posts {
		known = known || p.ID == messageID && p.Channel == channelID
	}
	if !known {
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	f.edits = append(f.edits, post{Channel: channelID, ID: messageID, Content: m.Content, Components: components(m.Components), At: time.Now()})
	writeJSON(w, 200, map[string]any{"id": messageID, "channel_id": channelID, "content": m.Content,
		"author": map[string]any{"id": botID, "bot": true}})
}

func (f *fakeDiscord) startThread(w http.ResponseWriter, channelID, messageID string, body []byte) {
	var req struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &req)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.threads[messageID]; ok {
		apiError(w, 400, 160004, "A thread has already been created for this message")
		return
	}
	if len([]rune(req.Name)) == 0 || len([]rune(req.Name)) > 100 {
		apiError(w, 400, 50035, "Invalid Form Body")
		return
	}
	f.threads[messageID] = channelID
	writeJSON(w, 201, map[string]any{"id": messageID, "type": 11, "guild_id": guildID, "parent_id": channelID, "name": req.Name})
}

func (f *fakeDiscord) getChannel(w http.ResponseWriter, id string) {
	f.mu.Lock()
	parent, isThread := f.threads[id]
	f.mu.Unlock()
	switch {
	case isThread:
		writeJSON(w, 200, map[string]any{"id": id, "type": 11, "guild_id": guildID, "parent_id": parent})
	case id == channel || strings.HasPrefix(id, "92"):
		writeJSON(w, 200, map[string]any{"id": id, "type": 0, "guild_id": guildID})
	default:
		apiError(w, 404, 10003, "Unknown Channel")
	}
}

func (f *fakeDiscord) editOriginal(w http.ResponseWriter, token string, body []byte) {
	var m struct {
		Content    string          `json:"content"`
		Components json.RawMessage `json:"components"`
	}
	_ = json.Unmarshal(body, &m)
	f.mu.Lock()
	id, ok := f.origIDs[token]
	if !ok {
		id = f.id()
		f.origIDs[token] = id
	}
	f.originals[token] = m.Content
	f.origComponents[token] = string(m.Components)
	f.mu.Unlock()
	writeJSON(w, 200, map[string]any{"id": id, "channel_id": channel, "content": m.Content})
}

// gateway speaks the gateway protocol: HELLO, then READY and GUILD_CREATE after
// IDENTIFY, heartbeat ACKs; dispatch sends events.
func (f *fakeDiscord) gateway(w http.ResponseWriter, r *http.Request) {
	conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	f.connMu.Lock()
	f.conn = conn
	f.connMu.Unlock()
	f.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 41250}})
	for {
		var in struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if err := conn.ReadJSON(&in); err != nil {
			return
		}
		switch in.Op {
		case 1:
			f.send(map[string]any{"op": 11})
		case 2:
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			_ = json.Unmarshal(in.D, &id)
			if id.Token != "Bot "+botToken || id.Intents&(1<<15) == 0 {
				_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed"))
				return
			}
			f.dispatch("READY", map[string]any{"v": 10, "session_id": "fake-session",
				"user":   map[string]any{"id": botID, "username": "wshub", "bot": true},
				"guilds": []any{map[string]any{"id": guildID, "unavailable": true}}})
			f.dispatch("GUILD_CREATE", map[string]any{"id": guildID, "name": "Team",
				"channels": []any{map[string]any{"id": channel, "type": 0, "name": "dev", "guild_id": guildID}}})
			select {
			case <-f.ready:
			default:
				close(f.ready)
			}
		}
	}
}

func (f *fakeDiscord) send(v any) {
	f.connMu.Lock()
	defer f.connMu.Unlock()
	if f.conn != nil {
		_ = f.conn.WriteJSON(v)
	}
}

// dispatch sends an event (op 0) with the next sequence number.
func (f *fakeDiscord) dispatch(event string, data any) {
	f.send(map[string]any{"op": 0, "t": event, "s": f.seq.Add(1), "d": data})
}

// waitReady waits until the bot has identified.
func (f *fakeDiscord) waitReady(t testing.TB) {
	t.Helper()
	select {
	case <-f.ready:
	case <-time.After(20 * time.Second):
		t.Fatal("the bot did not connect to the fake gateway")
	}
}

// waitPosts waits until the posts in channel satisfy cond.
func (f *fakeDiscord) waitPosts(t testing.TB, channelID, what string, cond func([]post) bool) []post {
	t.Helper()
	return eventually.Value(t, 30*time.Second, what+" in "+channelID, func() ([]post, error) {
		f.mu.Lock()
		var in []post
		for _, p := range f.posts {
			if p.Channel == channelID {
				in = append(in, p)
			}
		}
		f.mu.Unlock()
		if !cond(in) {
			return in, fmt.Errorf("got %+v", in)
		}
		return in, nil
	})
}

// messageCreate is a MESSAGE_CREATE payload from a member of the guild.
func messageCreate(id, channelID, content string, mentionsBot bool, roles ...string) map[string]any {
	m := map[string]any{"id": id, "channel_id": channelID, "guild_id": guildID, "content": content, "type": 0,
		"author": map[string]any{"id": humanID, "username": "dev", "global_name": "Dev Person"}, "mentions": []any{},
		"member": map[string]any{"roles": append([]string{}, roles...)}, "timestamp": time.Now().Format(time.RFC3339)}
	if mentionsBot {
		m["mentions"] = []any{map[string]any{"id": botID, "username": "wshub", "bot": true}}
	}
	return m
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
