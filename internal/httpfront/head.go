package httpfront

import (
	"bufio"
	"bytes"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// head is a request's header as it arrived, kept from fasthttp's HeaderReceived until
// the request is handled. Reading a body can fail (too large, malformed chunks, too
// slow) and fasthttp then resets the whole request, header included: the error still
// goes to the front-end owning the path, which may check the key first.
type head struct {
	// raw is the header serialised (request line, fields, blank line).
	raw []byte
	// refuse is a framing error the request gets instead of anything else.
	refuse error
}

// heads holds the head of each request being read, keyed by the pooled fasthttp header
// it was read into, from HeaderReceived until the request is handled (refuseMisframed,
// the first handler) or fails (handleError): whichever comes first takes it out, so no
// later request read into the same pooled header finds it.
type heads struct {
	m    sync.Map
	pool sync.Pool
}

func (h *heads) put(hdr *fasthttp.RequestHeader, refuse error) {
	hd, _ := h.pool.Get().(*head)
	if hd == nil {
		hd = &head{}
	}
	hd.raw, hd.refuse = hdr.AppendBytes(hd.raw[:0]), refuse
	h.m.Store(hdr, hd)
}

func (h *heads) take(c *fiber.Ctx) (*head, bool) {
	v, ok := h.m.LoadAndDelete(&c.Context().Request.Header)
	if !ok {
		return nil, false
	}
	return v.(*head), true
}

// release gives hd back for another request's head.
func (h *heads) release(hd *head) {
	hd.refuse = nil
	if cap(hd.raw) <= 16<<10 { // as large as a head may be (ReadBufferSize)
		h.pool.Put(hd)
	}
}

// restore puts the head back on a request that fasthttp reset after its body failed,
// and tells Fiber's context of its method and path.
func (hd *head) restore(c *fiber.Ctx) {
	req := c.Request()
	if err := req.Header.Read(bufio.NewReaderSize(bytes.NewReader(hd.raw), len(hd.raw)+1)); err != nil {
		return // it was read once; a head that does not read again stays reset
	}
	req.SetRequestURIBytes(req.Header.RequestURI())
	c.Method(string(req.Header.Method()))
	c.Path(string(req.URI().PathOriginal()))
}

// headerReceived runs after each request's header is read, before its body: it keeps
// the head, checks the framing and sets the path's body limit.
func (s *Server) headerReceived(hdr *fasthttp.RequestHeader) fasthttp.RequestConfig {
	refuse := framingError(hdr.RawHeaders())
	s.heads.put(hdr, refuse)
	if refuse != nil {
		// Read no body for it: a body of more than a byte fails at once (its framing is
		// not to be trusted), and the error handler answers with refuse.
		return fasthttp.RequestConfig{MaxRequestBodySize: 1}
	}
	path := hdr.RequestURI()
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return fasthttp.RequestConfig{MaxRequestBodySize: s.bodyLimit(string(path))}
}
