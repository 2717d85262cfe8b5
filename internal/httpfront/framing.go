package httpfront

import (
	"bytes"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

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

// refuseMisframed refuses a framing error for a request whose body fasthttp read
// without failing (an empty one), and closes the connection: what follows on it cannot
// be told apart from the body.
func (s *Server) refuseMisframed(c *fiber.Ctx) error {
	hd, ok := s.heads.take(c)
	if !ok {
		return c.Next()
	}
	refuse := hd.refuse
	s.heads.release(hd)
	if refuse != nil {
		c.Set(fiber.HeaderConnection, "close")
		return refuse
	}
	return c.Next()
}

// refuseEncoded answers 415 to an encoded body before any handler, signature checks
// included, can touch it, unless the path's front-end checks encodings itself. Fiber's
// Ctx.Body inflates gzip, deflate and br in memory with no limit: one megabyte of gzip
// is a gigabyte of heap.
func (s *Server) refuseEncoded(c *fiber.Ctx) error {
	enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))
	if enc == "" || strings.EqualFold(enc, "identity") {
		return c.Next()
	}
	for _, p := range s.checksEncoding {
		if under(c.Path(), p) {
			return c.Next()
		}
	}
	return core.Errorf(core.CodeUnsupportedContentEncoding, "Content-Encoding is not supported; send the body unencoded")
}
