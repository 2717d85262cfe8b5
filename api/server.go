// Package api is the REST front-end (/v1/api) on Fiber. It decodes requests, calls
// core's use cases and maps core.Error codes to HTTP statuses in one table.
package api

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/sse"
)

// Pinger reports whether the store is reachable (readiness).
type Pinger interface {
	Ping(ctx context.Context) error
}

// Options configure the HTTP front-end.
type Options struct {
	Log   *slog.Logger
	Ready Pinger
	// ReadyDetail is added to /readyz's answer: how the hub runs turns ("agentLimits"),
	// so a probe or an operator sees a hub running without limits.
	ReadyDetail map[string]string
	// Timeouts bound every connection; zero fields take the defaults (DefaultTimeouts).
	Timeouts Timeouts
	// RateLimit bounds each API key's requests (zero: no limit).
	RateLimit RateLimit
	// MaxStreamsPerKey bounds each key's open event streams on this replica (0: none).
	MaxStreamsPerKey int
	// StreamsClosing ends every open event stream when it is done: the hub shutting
	// down (nil: streams end at their lifetime only).
	StreamsClosing context.Context
	// AccountStreams bounds each account's open streams on this replica, across all its
	// keys and app sessions: the app holds the same Places (nil: no bound). Without it
	// an owner could multiply the per-key bound by making keys.
	AccountStreams *sse.Places
	// StreamPages paces the pages a key's event streams read from the store themselves
	// (a resume from far behind), a token bucket per key shared by its streams; events
	// its streams take from the workspace's feed are not counted (PerSecond 0: no pace).
	StreamPages RateLimit
	// BodyLimits bound the bodies of the routes other front-ends mount on this app, by
	// path prefix, the longest matching one winning (the app's forms, its uploads): a
	// larger body is refused before it is read.
	BodyLimits map[string]int
	// TrustedProxies are the addresses or CIDR ranges of the proxies in front of the
	// hub: a request from one of them is taken to come from the address its
	// X-Forwarded-For names (the app's sign-in limits and audit log use it). None: the
	// peer's address.
	TrustedProxies []string
}

// Timeouts bound how long a connection may take, so that slow or stalled clients
// (slowloris, a body that never arrives) cannot hold connections and memory forever.
type Timeouts struct {
	// Read bounds reading one request, headers and body: a 20 MiB upload must arrive
	// within it (60 s: about 350 KB/s).
	Read time.Duration
	// Write bounds writing one response.
	Write time.Duration
	// Idle bounds the wait for the next request on a keep-alive connection.
	Idle time.Duration
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

// DefaultTimeouts are the listeners' timeouts unless configured.
var DefaultTimeouts = Timeouts{Read: 60 * time.Second, Write: 60 * time.Second, Idle: 60 * time.Second}

// UseCases are the core groups the API calls (a *core.Service gives both).
type UseCases struct {
	*core.Workspaces
	*core.Webhooks
	// RuntimeAPI serves the runtime API of remote workspaces' machines (nil: not mounted).
	RuntimeAPI *core.RuntimeAPI
}

type server struct {
	svc   UseCases
	log   *slog.Logger
	heads heads
	// streamFor bounds an event stream: less than the write timeout, which fasthttp
	// applies to a whole response.
	streamFor time.Duration
	// streamsClosing is Options.StreamsClosing.
	streamsClosing context.Context
	// limits are the keys' rate limits, streams their open event streams and pages
	// the pace of their streams' own page reads (nil: no limit).
	limits         *keyLimits
	streams        *sse.Places
	accountStreams *sse.Places
	pages          *keyLimits
	// bodyLimits are Options.BodyLimits.
	bodyLimits map[string]int
}

const prefix = "/v1/api"

// route is one endpoint; the table also answers 405 for known paths.
type route struct {
	method  string
	pattern string // Fiber path under /v1/api
	match   *regexp.Regexp
	handler func(s *server, c *fiber.Ctx) error
}

var routes = []route{
	{"POST", "/workspaces", nil, (*server).createWorkspace},
	{"GET", "/workspaces", nil, (*server).listWorkspaces},
	{"GET", "/workspaces/:workspaceId", nil, (*server).getWorkspace},
	{"POST", "/workspaces/:workspaceId/messages", nil, (*server).sendMessage},
	{"GET", "/workspaces/:workspaceId/messages", nil, (*server).listMessages},
	{"GET", "/workspaces/:workspaceId/events", nil, (*server).listEvents},
	{"POST", "/workspaces/:workspaceId/turns/:turnId/stop", nil, (*server).stopTurn},
	{"POST", "/workspaces/:workspaceId/pull-request", nil, (*server).openPullRequest},
	{"POST", "/workspaces/:workspaceId/approvals/:approvalId", nil, (*server).decideApproval},
	{"POST", "/workspaces/:workspaceId/attachments", nil, (*server).uploadAttachment},
	{"GET", "/projects", nil, (*server).listProjects},
	{"GET", "/agents", nil, (*server).listAgents},
	{"GET", "/providers", nil, (*server).listProviders},
	{"POST", "/webhooks", nil, (*server).createWebhook},
	{"GET", "/webhooks", nil, (*server).listWebhooks},
	{"DELETE", "/webhooks/:webhookId", nil, (*server).deleteWebhook},
	{"GET", "/webhooks/:webhookId/deliveries", nil, (*server).listDeliveries},
	{"POST", "/webhooks/:webhookId/deliveries/:deliveryId/redeliver", nil, (*server).redeliver},
}

func init() {
	for i := range routes {
		re := regexp.MustCompile(`:[A-Za-z]+`).ReplaceAllString(routes[i].pattern, `[^/]+`)
		routes[i].match = regexp.MustCompile(`^` + prefix + re + `/?$`)
	}
}

// New builds the Fiber app: /v1/api, /healthz and /readyz. Not /metrics: it is not
// authenticated, so it has a listener of its own (hub.MetricsServer), off by default.
func New(svc UseCases, opt Options) *fiber.App {
	log := opt.Log
	if log == nil {
		log = slog.Default()
	}
	s := &server{svc: svc, log: log, limits: newKeyLimits(opt.RateLimit), streams: sse.NewPlaces(opt.MaxStreamsPerKey),
		accountStreams: opt.AccountStreams, streamsClosing: opt.StreamsClosing, pages: newKeyLimits(opt.StreamPages), bodyLimits: opt.BodyLimits}
	to := opt.Timeouts
	to.Read, to.Write, to.Idle = cmp.Or(to.Read, DefaultTimeouts.Read), cmp.Or(to.Write, DefaultTimeouts.Write), cmp.Or(to.Idle, DefaultTimeouts.Idle)
	s.streamFor = to.Write - 5*time.Second
	app := fiber.New(fiber.Config{
		ReadTimeout:  to.Read,
		WriteTimeout: to.Write,
		IdleTimeout:  to.Idle,
		// Uploads are the largest bodies; a Content-Length over this is refused before
		// the body is read and reaches errorHandler as 413.
		BodyLimit:             core.MaxAssetBytes,
		DisableStartupMessage: true,
		// fasthttp's default 4 KiB for the request line and headers refuses long ids and
		// keys before routing (and closes the connection mid-request); 16 KiB lets them
		// reach the checks that answer with a documented code.
		ReadBufferSize: 16 << 10,
		ErrorHandler:   s.errorHandler,
		// X-Forwarded-For is read only from a trusted proxy: anyone else could name any
		// address in it.
		ProxyHeader:             proxyHeader(opt.TrustedProxies),
		EnableTrustedProxyCheck: len(opt.TrustedProxies) > 0,
		TrustedProxies:          opt.TrustedProxies,
		CaseSensitive:           true,
		StrictRouting:           false,

		// fasthttp would otherwise parse a multipart/form-data body before routing and
		// answer a malformed one itself, ahead of authentication; no endpoint takes forms.
		DisablePreParseMultipartForm: true,
	})
	app.Server().HeaderReceived = s.headerReceived
	// First of all handlers, so that they also guard routes added later (/slack/events).
	app.Use(s.refuseMisframed, s.refuseEncoded)
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ok": true}) })
	app.Get("/openapi.json", serveOpenAPI)
	app.Get("/readyz", func(c *fiber.Ctx) error {
		if opt.Ready != nil {
			if err := opt.Ready.Ping(c.UserContext()); err != nil {
				return c.Status(503).JSON(errorBody{Error: core.CodeServiceUnavailable, Detail: "the database is unreachable"})
			}
		}
		body := fiber.Map{"ok": true}
		for k, v := range opt.ReadyDetail {
			body[k] = v
		}
		return c.JSON(body)
	})
	if svc.RuntimeAPI != nil {
		mountRuntime(app, s)
	}
	v1 := app.Group(prefix, s.authenticate)
	for _, r := range routes {
		h := r.handler
		v1.Add(r.method, r.pattern, func(c *fiber.Ctx) error { return h(s, c) })
	}
	v1.Use(s.unmatched)
	return app
}

// authenticate runs first on every /v1/api request: preflight refusal, then the key
// (401), then entitlement (403) except for Delete webhook.
func (s *server) authenticate(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodOptions {
		return writeError(c, s.log, core.Errorf(core.CodeCrossOriginNotAllowed, "browsers on other sites may not call this API"))
	}
	acct, err := s.caller(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	if s.limits != nil && !s.limits.take(c, acct.KeyID) {
		return writeError(c, s.log, errRateLimited(c))
	}
	c.Locals(accountKey{}, acct)
	return c.Next()
}

// caller checks the key (401) and then entitlement (403), except for Delete webhook.
func (s *server) caller(c *fiber.Ctx) (*core.Account, error) {
	acct, err := s.callerOf(c.UserContext(), head{method: c.Method(), path: c.Path(), auth: c.Get(fiber.HeaderAuthorization)})
	if acct != nil {
		acct.Address = c.IP() // the client's, through trusted proxies only
	}
	return acct, err
}

// callerOf is caller for a request known by its head only (its body could not be read).
func (s *server) callerOf(ctx context.Context, hd head) (*core.Account, error) {
	acct, err := s.svc.Authenticate(ctx, hd.auth)
	if err != nil {
		return nil, err
	}
	if !isDeleteWebhook(hd.method, hd.path) {
		if err := s.svc.RequireEntitlement(acct); err != nil {
			return nil, err
		}
	}
	return acct, nil
}

var deleteWebhookPath = regexp.MustCompile(`^` + prefix + `/webhooks/[^/]+/?$`)

// isDeleteWebhook marks the one endpoint api.md exempts from the entitlement check.
func isDeleteWebhook(method, path string) bool {
	return method == fiber.MethodDelete && deleteWebhookPath.MatchString(path)
}

type accountKey struct{}

func account(c *fiber.Ctx) *core.Account { return c.Locals(accountKey{}).(*core.Account) }

// unmatched answers 405 for a known path with another method, else 404.
func (s *server) unmatched(c *fiber.Ctx) error {
	for _, r := range routes {
		if r.match.MatchString(c.Path()) {
			return writeError(c, s.log, core.Errorf(core.CodeMethodNotAllowed, "%s is not allowed here", c.Method()))
		}
	}
	return writeError(c, s.log, core.Errorf(core.CodeNotFound, "no such endpoint"))
}

// errorHandler catches what Fiber and fasthttp raise before or around handlers. An
// oversized body is refused before it is read; the key and entitlement are still
// checked first, so the order of checks holds for it too.
func (s *server) errorHandler(c *fiber.Ctx, err error) error {
	// When reading the body failed, fasthttp has reset the request: its head, kept
	// before the body was read, says what it was.
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
	if !ok {
		hd = head{method: c.Method(), path: c.Path(), auth: c.Get(fiber.HeaderAuthorization)}
	}
	if hd.refuse != nil {
		return writeError(c, s.log, hd.refuse)
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusRequestEntityTooLarge:
			for p := range s.bodyLimits { // another front-end's route: its own words, not the API's
				if strings.HasPrefix(hd.path, p) {
					return c.Status(fiber.StatusRequestEntityTooLarge).SendString("The form is too large.")
				}
			}
			if strings.HasPrefix(hd.path, prefix) {
				if _, aerr := s.callerOf(c.UserContext(), hd); aerr != nil {
					return writeError(c, s.log, aerr)
				}
			}
			if strings.HasSuffix(strings.TrimSuffix(hd.path, "/"), "/attachments") {
				return writeError(c, s.log, core.Errorf(core.CodeInvalidAssetSize, "an attachment is 1 byte to 20 MiB"))
			}
			return writeError(c, s.log, core.Errorf(core.CodeInvalidRequest, "the request body is too large"))
		case fiber.StatusNotFound:
			return writeError(c, s.log, core.Errorf(core.CodeNotFound, "no such endpoint"))
		case fiber.StatusMethodNotAllowed:
			return writeError(c, s.log, core.Errorf(core.CodeMethodNotAllowed, "method not allowed"))
		case fiber.StatusBadRequest, fiber.StatusRequestHeaderFieldsTooLarge, fiber.StatusRequestTimeout:
			return writeError(c, s.log, core.Errorf(core.CodeInvalidRequest, "the request could not be read"))
		}
	}
	return writeError(c, s.log, err)
}

// param copies a path parameter: Fiber's values are only valid inside the handler.
func param(c *fiber.Ctx, name string) string { return utils.CopyString(c.Params(name)) }

// optionalHeader returns a copy of a header, or nil when it is absent.
func optionalHeader(c *fiber.Ctx, name string) *string {
	vals := c.Request().Header.PeekAll(name)
	if len(vals) == 0 {
		return nil
	}
	v := string(vals[0])
	return &v
}
