// Package api is the REST front-end (/v1/api) on Fiber. It decodes requests, calls
// core's use cases and maps core.Error codes to HTTP statuses in one table.
package api

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/httpfront"
	"github.com/wshub/wshub/internal/keyrate"
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
	// StreamFor bounds an event stream: less than the server's write timeout, which
	// fasthttp applies to a whole response.
	StreamFor time.Duration
	// Requests bound each API key's requests, a token bucket per key id (nil: no
	// limit). The hub gives the app the same buckets for its members.
	Requests *keyrate.Buckets
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
	// its streams take from the workspace's feed are not counted (nil: no pace).
	StreamPages *keyrate.Buckets
}

// UseCases are the core groups the API calls (a *core.Service gives both).
type UseCases struct {
	*core.Workspaces
	*core.Webhooks
	*core.Schedules
	// RuntimeAPI serves the runtime API of remote workspaces' machines (nil: not mounted).
	RuntimeAPI *core.RuntimeAPI
}

type server struct {
	svc UseCases
	log *slog.Logger
	// streamFor is Options.StreamFor.
	streamFor time.Duration
	// streamsClosing is Options.StreamsClosing.
	streamsClosing context.Context
	// limits are the keys' rate limits, streams their open event streams and pages
	// the pace of their streams' own page reads (nil: no limit).
	limits         *keyLimits
	streams        *sse.Places
	accountStreams *sse.Places
	pages          *keyLimits
	ready          Pinger
	readyDetail    map[string]string
}

const prefix = "/v1/api"

// route is one endpoint; the table also answers 405 for known paths. scope is what
// a key limited to scopes needs to call it: every route names one (core refuses a
// route without), and the OpenAPI document lists it as x-wshub-scope.
type route struct {
	method  string
	pattern string // Fiber path under /v1/api
	scope   core.KeyScope
	match   *regexp.Regexp
	handler func(s *server, c *fiber.Ctx) error
}

var routes = []route{
	{"POST", "/workspaces", core.ScopeWorkspacesWrite, nil, (*server).createWorkspace},
	{"GET", "/workspaces", core.ScopeWorkspacesRead, nil, (*server).listWorkspaces},
	{"GET", "/workspaces/:workspaceId", core.ScopeWorkspacesRead, nil, (*server).getWorkspace},
	{"POST", "/workspaces/:workspaceId/messages", core.ScopeMessagesWrite, nil, (*server).sendMessage},
	{"GET", "/workspaces/:workspaceId/messages", core.ScopeWorkspacesRead, nil, (*server).listMessages},
	{"GET", "/workspaces/:workspaceId/events", core.ScopeWorkspacesRead, nil, (*server).listEvents},
	{"POST", "/workspaces/:workspaceId/turns/:turnId/stop", core.ScopeWorkspacesWrite, nil, (*server).stopTurn},
	{"POST", "/workspaces/:workspaceId/pull-request", core.ScopeWorkspacesWrite, nil, (*server).openPullRequest},
	{"POST", "/workspaces/:workspaceId/approvals/:approvalId", core.ScopeApprovalsWrite, nil, (*server).decideApproval},
	{"POST", "/workspaces/:workspaceId/attachments", core.ScopeAttachmentsWrite, nil, (*server).uploadAttachment},
	// Agents and providers are the catalog a workspace is made from, read with the
	// projects.
	{"GET", "/projects", core.ScopeProjectsRead, nil, (*server).listProjects},
	{"GET", "/agents", core.ScopeProjectsRead, nil, (*server).listAgents},
	{"GET", "/providers", core.ScopeProjectsRead, nil, (*server).listProviders},
	{"POST", "/webhooks", core.ScopeWebhooksWrite, nil, (*server).createWebhook},
	{"GET", "/webhooks", core.ScopeWebhooksRead, nil, (*server).listWebhooks},
	{"DELETE", "/webhooks/:webhookId", core.ScopeWebhooksWrite, nil, (*server).deleteWebhook},
	{"GET", "/webhooks/:webhookId/deliveries", core.ScopeWebhooksRead, nil, (*server).listDeliveries},
	{"POST", "/webhooks/:webhookId/deliveries/:deliveryId/redeliver", core.ScopeWebhooksWrite, nil, (*server).redeliver},
	// Schedules start workspaces: read and changed with the workspaces' scopes.
	{"POST", "/schedules", core.ScopeWorkspacesWrite, nil, (*server).createSchedule},
	{"GET", "/schedules", core.ScopeWorkspacesRead, nil, (*server).listSchedules},
	{"GET", "/schedules/:scheduleId", core.ScopeWorkspacesRead, nil, (*server).getSchedule},
	{"PATCH", "/schedules/:scheduleId", core.ScopeWorkspacesWrite, nil, (*server).updateSchedule},
	{"DELETE", "/schedules/:scheduleId", core.ScopeWorkspacesWrite, nil, (*server).deleteSchedule},
	{"POST", "/schedules/:scheduleId/pause", core.ScopeWorkspacesWrite, nil, (*server).pauseSchedule},
	{"POST", "/schedules/:scheduleId/resume", core.ScopeWorkspacesWrite, nil, (*server).resumeSchedule},
	{"POST", "/schedules/:scheduleId/run", core.ScopeWorkspacesWrite, nil, (*server).runSchedule},
	{"GET", "/schedules/:scheduleId/runs", core.ScopeWorkspacesRead, nil, (*server).listScheduleRuns},
}

// RouteScope is one route of the API and the scope a key needs to call it.
type RouteScope struct {
	Method, Path string // Path as OpenAPI writes it: /v1/api/workspaces/{workspaceId}
	Scope        core.KeyScope
}

// RouteScopes lists every route with its scope (tests call each; the OpenAPI
// document must agree).
func RouteScopes() []RouteScope {
	out := make([]RouteScope, len(routes))
	for i, r := range routes {
		out[i] = RouteScope{r.method, prefix + pathParam.ReplaceAllString(r.pattern, `{$1}`), r.scope}
	}
	return out
}

// pathParam is a route pattern's parameter (:workspaceId).
var pathParam = regexp.MustCompile(`:([A-Za-z]+)`)

func init() {
	for i := range routes {
		re := pathParam.ReplaceAllString(routes[i].pattern, `[^/]+`)
		routes[i].match = regexp.MustCompile(`^` + prefix + re + `/?$`)
	}
}

// API is the REST front-end, to be mounted on the hub's server.
type API struct{ s *server }

// New builds the API.
func New(svc UseCases, opt Options) *API {
	log := opt.Log
	if log == nil {
		log = slog.Default()
	}
	return &API{&server{svc: svc, log: log, limits: newKeyLimits(opt.Requests), streams: sse.NewPlaces(opt.MaxStreamsPerKey),
		accountStreams: opt.AccountStreams, streamsClosing: opt.StreamsClosing, pages: newKeyLimits(opt.StreamPages),
		streamFor: opt.StreamFor, ready: opt.Ready, readyDetail: opt.ReadyDetail}}
}

// Front declares the API to the hub's server. The API answers, in api.md's JSON, its
// own paths and every path no other front-end owns (health, Slack's and Discord's
// endpoints, unknown paths). Uploads are its largest bodies; it refuses encoded
// bodies itself under /v1/api, after the key.
func (a *API) Front() httpfront.Front {
	return httpfront.Front{Prefixes: []string{"/"}, BodyLimits: map[string]int{"/": core.MaxAssetBytes},
		HandleError: a.s.handleError, ChecksEncoding: []string{prefix + "/"}, Mount: a.s.mount}
}

// mount adds /v1/api, /healthz, /readyz, /openapi.json and the runtime API. Not
// /metrics: it is not authenticated, so it has a listener of its own
// (hub.MetricsServer), off by default.
func (s *server) mount(app fiber.Router) {
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ok": true}) })
	app.Get("/openapi.json", serveOpenAPI)
	app.Get("/readyz", func(c *fiber.Ctx) error {
		if s.ready != nil {
			if err := s.ready.Ping(c.UserContext()); err != nil {
				return c.Status(503).JSON(errorBody{Error: core.CodeServiceUnavailable, Detail: "the database is unreachable"})
			}
		}
		body := fiber.Map{"ok": true}
		for k, v := range s.readyDetail {
			body[k] = v
		}
		return c.JSON(body)
	})
	if s.svc.RuntimeAPI != nil {
		mountRuntime(app, s)
	}
	v1 := app.Group(prefix, s.authenticate)
	for _, r := range routes {
		h, scope := r.handler, r.scope
		v1.Add(r.method, r.pattern, func(c *fiber.Ctx) error {
			if err := s.svc.Authorize(account(c), scope); err != nil {
				return writeError(c, s.log, err)
			}
			return h(s, c)
		})
	}
	v1.Use(s.unmatched)
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
	acct, err := s.svc.Authenticate(c.UserContext(), c.Get(fiber.HeaderAuthorization))
	if err != nil {
		return nil, err
	}
	if !isDeleteWebhook(c.Method(), c.Path()) {
		if err := s.svc.RequireEntitlement(acct); err != nil {
			return nil, err
		}
	}
	acct.Address = c.IP() // the client's, through trusted proxies only
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

// authorize checks the key's scope for the route of a request refused before its
// handler ran (no route: nothing to check; the answer is the refusal's).
func (s *server) authorize(c *fiber.Ctx, acct *core.Account) error {
	for _, r := range routes {
		if r.method == c.Method() && r.match.MatchString(c.Path()) {
			return s.svc.Authorize(acct, r.scope)
		}
	}
	return nil
}

// handleError answers what Fiber, fasthttp and the server raise before or around
// handlers, in api.md's codes. An oversized body is refused before it is read; the key,
// entitlement and scope are still checked first, so the order of checks holds for it too
// (the server has put the request's head back).
func (s *server) handleError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusRequestEntityTooLarge:
			if strings.HasPrefix(c.Path(), prefix) {
				acct, aerr := s.caller(c)
				if aerr == nil {
					aerr = s.authorize(c, acct)
				}
				if aerr != nil {
					return writeError(c, s.log, aerr)
				}
			}
			if strings.HasSuffix(strings.TrimSuffix(c.Path(), "/"), "/attachments") {
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
