// Package httpfront is the hub's one HTTP server. It owns what every request meets
// before a front-end sees it: the listener's settings (timeouts, buffer sizes, trusted
// proxies), the checks of how a body is framed and encoded, and each path's body limit.
// The front-ends (the API, the app, the bots) mount their routes on its Fiber app and
// declare what they own: their path prefixes, their body limits and their error
// handler, so that an error on an app page is the app's page and one on the API is the
// API's JSON.
package httpfront

import (
	"cmp"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// Timeouts bound how long a connection may take, so that slow or stalled clients
// (slowloris, a body that never arrives) cannot hold connections and memory forever.
type Timeouts struct {
	// Read bounds reading one request, headers and body: a 20 MiB upload must arrive
	// within it (60 s: about 350 KB/s).
	Read time.Duration
	// Write bounds writing one response; a stream ends before it (StreamFor).
	Write time.Duration
	// Idle bounds the wait for the next request on a keep-alive connection.
	Idle time.Duration
}

// DefaultTimeouts are the listener's timeouts unless configured.
var DefaultTimeouts = Timeouts{Read: 60 * time.Second, Write: 60 * time.Second, Idle: 60 * time.Second}

// Options configure the server.
type Options struct {
	Log *slog.Logger
	// Timeouts bound every connection; zero fields take DefaultTimeouts'.
	Timeouts Timeouts
	// TrustedProxies are the addresses or CIDR ranges of the proxies in front of the
	// hub: a request from one of them is taken to come from the address its
	// X-Forwarded-For names (the API's and the app's limits and the audit log use it).
	// None: the peer's address.
	TrustedProxies []string
}

// Front is what a front-end declares to the server.
type Front struct {
	// Prefixes are the paths whose errors it answers: "/app/" owns /app and all under
	// it, "/" whatever no other front-end owns. The longest prefix wins.
	Prefixes []string
	// BodyLimits bound request bodies by path prefix, the longest prefix of any
	// front-end winning (an app's uploads are larger than its forms). A larger body is
	// refused before it is read: the owner's HandleError gets a 413 fiber.Error, with
	// the request's head as it was sent. A path no prefix bounds takes 4 MiB.
	BodyLimits map[string]int
	// HandleError answers an error raised for a request on the front-end's paths: by
	// Fiber (404, 405), by reading the request (400, 408, 413, 431: the head is
	// restored, the body is not), by the server's checks (a *core.Error) or returned
	// by a handler. It must answer: its own error is logged and becomes a bare 500.
	HandleError fiber.ErrorHandler
	// ChecksEncoding are the path prefixes whose handlers refuse content-encoded
	// bodies themselves, where a contract orders the checks (the API's: the key
	// first). Elsewhere the server refuses them before any handler, signature checks
	// included, can inflate one.
	ChecksEncoding []string
	// Mount adds the front-end's routes to the server's app.
	Mount func(r fiber.Router)
}

// Server is the one Fiber app and the front-ends mounted on it.
type Server struct {
	// App is where front-ends add their routes (after Add of their Front).
	App      *fiber.App
	log      *slog.Logger
	timeouts Timeouts
	heads    heads
	// owners and limits are the front-ends' prefixes, longest first; written by Add
	// before the server serves, only read after.
	owners []owner
	limits []limit
	// checksEncoding are the fronts' ChecksEncoding.
	checksEncoding []string
}

type owner struct {
	prefix string
	front  *Front
}

type limit struct {
	prefix string
	bytes  int
}

// defaultBodyLimit bounds a body no front-end's prefix bounds (fasthttp's default).
const defaultBodyLimit = 4 << 20

// New builds the server's Fiber app with no front-end yet.
func New(opt Options) *Server {
	s := &Server{log: cmp.Or(opt.Log, slog.Default()), timeouts: opt.Timeouts}
	to := &s.timeouts
	to.Read, to.Write, to.Idle = cmp.Or(to.Read, DefaultTimeouts.Read), cmp.Or(to.Write, DefaultTimeouts.Write), cmp.Or(to.Idle, DefaultTimeouts.Idle)
	s.App = fiber.New(fiber.Config{
		ReadTimeout:  to.Read,
		WriteTimeout: to.Write,
		IdleTimeout:  to.Idle,
		// Each request's limit is its path's (headerReceived); this is for a request
		// whose head could not be parsed.
		BodyLimit:             defaultBodyLimit,
		DisableStartupMessage: true,
		// fasthttp's default 4 KiB for the request line and headers refuses long ids and
		// keys before routing (and closes the connection mid-request); 16 KiB lets them
		// reach the checks that answer with a documented code.
		ReadBufferSize: 16 << 10,
		ErrorHandler:   s.handleError,
		// X-Forwarded-For is read only from a trusted proxy: anyone else could name any
		// address in it.
		ProxyHeader:             proxyHeader(opt.TrustedProxies),
		EnableTrustedProxyCheck: len(opt.TrustedProxies) > 0,
		TrustedProxies:          opt.TrustedProxies,
		CaseSensitive:           true,
		StrictRouting:           false,
		// fasthttp would otherwise parse a multipart/form-data body before routing and
		// answer a malformed one itself, ahead of authentication; no route takes
		// multipart forms.
		DisablePreParseMultipartForm: true,
	})
	s.App.Server().HeaderReceived = s.headerReceived
	// First of all handlers, so that they guard every route added later.
	s.App.Use(s.refuseMisframed, s.refuseEncoded)
	return s
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

// StreamFor is how long a response that streams may last: less than the write
// timeout, which fasthttp applies to a whole response.
func (s *Server) StreamFor() time.Duration { return s.timeouts.Write - 5*time.Second }

// Add declares a front-end and mounts its routes; call it before the server serves.
func (s *Server) Add(f Front) {
	if f.Mount != nil {
		f.Mount(s.App)
	}
	for _, p := range f.Prefixes {
		s.owners = append(s.owners, owner{prefix: p, front: &f})
	}
	s.checksEncoding = append(s.checksEncoding, f.ChecksEncoding...)
	for p, n := range f.BodyLimits {
		s.limits = append(s.limits, limit{prefix: p, bytes: n})
	}
	slices.SortStableFunc(s.owners, func(a, b owner) int { return len(b.prefix) - len(a.prefix) })
	slices.SortStableFunc(s.limits, func(a, b limit) int { return len(b.prefix) - len(a.prefix) })
}

// under reports whether path is prefix or under it: "/app/" holds /app and /app/x,
// not /apple.
func under(path, prefix string) bool {
	return strings.HasPrefix(path, prefix) || path == strings.TrimSuffix(prefix, "/")
}

// ownerOf is the front-end that answers path's errors (nil: none owns it).
func (s *Server) ownerOf(path string) *Front {
	for _, o := range s.owners {
		if under(path, o.prefix) {
			return o.front
		}
	}
	return nil
}

// bodyLimit is path's body limit.
func (s *Server) bodyLimit(path string) int {
	for _, l := range s.limits {
		if under(path, l.prefix) {
			return l.bytes
		}
	}
	return defaultBodyLimit
}

// handleError hands an error to the front-end owning the request's path. When reading
// the body failed, fasthttp has reset the request: the head kept before the body was
// read is put back first, so the front-end sees the request it was sent (its path,
// its key).
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	hd, ok := s.heads.take(c)
	if fe := (*fiber.Error)(nil); !ok && errors.As(err, &fe) && fe.Code == fiber.StatusRequestTimeout &&
		len(c.Request().Header.RawHeaders()) == 0 {
		// The wait for a request's head timed out before one was read: most often a
		// connection a client opened and never used. It is closed without an answer,
		// which the client would otherwise read as the answer to the next request it
		// sends on it. (A head that arrived but is malformed still gets its 400.)
		_ = c.Context().Conn().Close()
		return nil
	}
	if ok {
		hd.restore(c)
		if hd.refuse != nil {
			err = hd.refuse
		}
		s.heads.release(hd)
	}
	if f := s.ownerOf(c.Path()); f != nil && f.HandleError != nil {
		return f.HandleError(c, err)
	}
	// No one owns the path: the status alone, in words no front-end chose.
	code := fiber.StatusInternalServerError
	if fe := (*fiber.Error)(nil); errors.As(err, &fe) {
		code = fe.Code
	} else {
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	return c.Status(code).SendString(utils.StatusMessage(code))
}
