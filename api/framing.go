package api

import (
	"bytes"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/wshub/wshub/core"
)

// head is what the hub learns of a request once its header has arrived and before its
// body is read (fasthttp's HeaderReceived). It is kept because reading a body can fail
// (too large, malformed chunks) and fasthttp then resets the whole request, header
// included: the error handler still has to check the key first and answer for the
// route the request was for.
type head struct {
	method, path, auth string
	// refuse is a framing error the request gets instead of anything else.
	refuse error
}

// heads holds the head of each request being read, keyed by the pooled fasthttp header
// it was read into, from HeaderReceived until the request is handled (refuseMisframed,
// the first handler) or fails (errorHandler): whichever comes first takes it out, so no
// later request read into the same pooled header finds it.
type heads struct{ m sync.Map }

func (h *heads) put(hdr *fasthttp.RequestHeader, hd head) { h.m.Store(hdr, hd) }

func (h *heads) take(c *fiber.Ctx) (head, bool) {
	v, ok := h.m.LoadAndDelete(&c.Context().Request.Header)
	if !ok {
		return head{}, false
	}
	return v.(head), true
}

// headerReceived runs after each request header is read, before the body.
func (s *server) headerReceived(hdr *fasthttp.RequestHeader) fasthttp.RequestConfig {
	hd := head{method: string(hdr.Method()), path: string(hdr.RequestURI()), auth: string(hdr.Peek(fiber.HeaderAuthorization))}
	if i := strings.IndexByte(hd.path, '?'); i >= 0 {
		hd.path = hd.path[:i]
	}
	hd.refuse = framingError(hdr.RawHeaders())
	s.heads.put(hdr, hd)
	if hd.refuse != nil {
		// Read no body for it: a body of more than a byte fails at once (its framing is
		// not to be trusted), and the error handler answers with refuse.
		return fasthttp.RequestConfig{MaxRequestBodySize: 1}
	}
	// The longest prefix wins: a front-end's uploads are larger than its forms.
	best, limit := -1, 0
	for prefix, l := range s.bodyLimits {
		if strings.HasPrefix(hd.path, prefix) && len(prefix) > best {
			best, limit = len(prefix), l
		}
	}
	if best < 0 {
		return fasthttp.RequestConfig{}
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: limit}
}

// framingError checks how the request says where its body ends (RFC 9112 6.1-6.3),
// which fasthttp reads leniently: it takes one of several Content-Length headers, and
// any Transfer-Encoding but identity as chunked. Where a proxy in front reads the same
// bytes differently, the difference smuggles a request past it.
//
//   - Content-Length given more than once with different values: 400.
//   - Transfer-Encoding other than exactly "chunked" (gzip, chunked; identity; an
//     unknown coding): 501, codings this server does not implement.
//   - Transfer-Encoding and Content-Length together: 400.
func framingError(raw []byte) error {
	var lengths, codings []string
	for line := range bytes.Lines(raw) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v := strings.TrimSpace(string(value))
		switch {
		case bytes.EqualFold(bytes.TrimSpace(name), []byte(fiber.HeaderContentLength)):
			lengths = append(lengths, v)
		case bytes.EqualFold(bytes.TrimSpace(name), []byte(fiber.HeaderTransferEncoding)):
			for _, c := range strings.Split(v, ",") {
				codings = append(codings, strings.ToLower(strings.TrimSpace(c)))
			}
		}
	}
	for _, l := range lengths[min(1, len(lengths)):] {
		if l != lengths[0] {
			return core.Errorf(core.CodeInvalidRequest, "conflicting Content-Length headers")
		}
	}
	if len(codings) == 0 {
		return nil
	}
	if len(codings) != 1 || codings[0] != "chunked" {
		return core.Errorf(core.CodeNotImplemented, "Transfer-Encoding %q is not supported; send chunked or a Content-Length", strings.Join(codings, ", "))
	}
	if len(lengths) > 0 {
		return core.Errorf(core.CodeInvalidRequest, "Transfer-Encoding and Content-Length together")
	}
	return nil
}

// refuseMisframed answers a framing error for a request whose body fasthttp read
// without failing (an empty one), and closes the connection: what follows on it cannot
// be told apart from the body.
func (s *server) refuseMisframed(c *fiber.Ctx) error {
	if hd, ok := s.heads.take(c); ok && hd.refuse != nil {
		c.Set(fiber.HeaderConnection, "close")
		return writeError(c, s.log, hd.refuse)
	}
	return c.Next()
}
