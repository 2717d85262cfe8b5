// Package web is the app at /app/: people sign in (OpenID Connect, Discord, or the
// development hub's one-time link); members see and drive the account's workspaces,
// and owners manage its keys, webhooks, members and projects' secrets. Pages are
// rendered on the server from embedded templates; a little script from /app/static/
// copies to the clipboard.
// It is a front-end like api/ and bots/: it calls core.App, core.AppWorkspaces,
// core.AppProjects and core.AppSchedules only, and every page acts through the
// signed-in person's session.
package web

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/httpfront"
	"github.com/wshub/wshub/internal/keyrate"
	"github.com/wshub/wshub/internal/sse"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// OIDC is an OpenID Connect provider people sign in with (Issuer "": none).
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// Name is the provider as the sign-in button names it ("" : "single sign-on").
	Name string
	// SlackIssuer is the issuer whose Slack team and user claims are believed (""
	// : SlackIssuer, Slack's own). Only tests name another, their stand-in for Slack.
	SlackIssuer string
}

// Options configure the app.
type Options struct {
	Log *slog.Logger
	// Schedules are the schedules page's use cases.
	Schedules *core.AppSchedules
	// PublicURL is the hub's address as browsers reach it: the sign-in callback is
	// PublicURL + "/app/signin/callback".
	PublicURL string
	OIDC      OIDC
	Discord   Discord
	// Insecure lets the session cookie travel over plain http: only for a development
	// hub on loopback. The cookie then loses its __Host- prefix, which requires Secure.
	Insecure bool
	// SignInRate and SignInBurst bound sign-in attempts per client address (defaults
	// 1 a second, 10 at once).
	SignInRate  float64
	SignInBurst int
	// Now is the clock of the cookie's expiry (nil: time.Now).
	Now func() time.Time
	// MaxStreams bounds each member's live pages on this replica (0: no limit), as
	// WSHUB_MAX_STREAMS_PER_KEY bounds a key's event streams; StreamFor ends each
	// stream before the server's write timeout (the page's script resumes it).
	MaxStreams int
	StreamFor  time.Duration
	// StreamPages paces the pages a member's live pages read from the store
	// themselves, a bucket per member id (nil: no pace); the hub gives the API the
	// same buckets for its keys.
	StreamPages *keyrate.Buckets
	// Requests bound a signed-in member's requests, a bucket per member id (nil: no
	// bound): the buckets that bound the API's keys, so a person in the app is held
	// to what a key is held to.
	Requests *keyrate.Buckets
	// StreamsClosing ends every live page's stream when it is done: the hub shutting
	// down (nil: at their lifetime only).
	StreamsClosing context.Context
	// AccountStreams bounds each account's live pages and API event streams together
	// on this replica: the API holds the same Places (nil: no bound).
	AccountStreams *sse.Places
}

type app struct {
	// public is the hub's address as browsers reach it (PublicURL, or SetPublicURL's).
	public atomic.Pointer[string]
	core   *core.App
	// workspaces are the workspace pages' use cases; projects the project pages'.
	workspaces *core.AppWorkspaces
	projects   *core.AppProjects
	schedules  *core.AppSchedules
	opts       Options
	log        *slog.Logger
	pages      *template.Template
	oidc       *oidcClient
	limit      *keyrate.Buckets
	// requests are Options.Requests.
	requests *keyrate.Buckets
	// streams are the members' open live pages, and paces the pace of their own reads.
	streams *sse.Places
	paces   *keyrate.Buckets
}

// MaxFormBytes bounds a request body of the app: its forms are a few short fields.
const MaxFormBytes = 64 << 10

// App is the mounted app.
type App struct{ a *app }

// SetPublicURL names the hub's address when the configuration gave none (a test's
// hub, on the port it was given): the sign-in returns to it.
func (w *App) SetPublicURL(u string) {
	u = strings.TrimSuffix(u, "/")
	w.a.public.CompareAndSwap(nil, &u)
}

// redirectBase is where the providers send people back to.
func (a *app) redirectBase() string {
	if p := a.public.Load(); p != nil {
		return *p
	}
	return ""
}

// New builds the app, to be mounted on the hub's server under /app.
func New(svc *core.App, workspaces *core.AppWorkspaces, projects *core.AppProjects, opts Options) (*App, error) {
	pages, err := template.New("").Funcs(templateFuncs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &app{core: svc, workspaces: workspaces, projects: projects, schedules: opts.Schedules, opts: opts, log: opts.Log, pages: pages, limit: signInLimits(opts.SignInRate, opts.SignInBurst), requests: opts.Requests,
		streams: sse.NewPlaces(opts.MaxStreams), paces: opts.StreamPages}
	if opts.PublicURL != "" {
		u := strings.TrimSuffix(opts.PublicURL, "/")
		a.public.Store(&u)
	}
	if opts.OIDC.Issuer != "" {
		a.oidc = newOIDCClient(opts.OIDC)
	}
	return &App{a: a}, nil
}

// Front declares the app to the hub's server: it owns /app and everything under it,
// answers their errors with its own pages (errors.go), and bounds its bodies before
// they are read: forms to MaxFormBytes, the project pages' to MaxSecretFormBytes,
// uploads to MaxUploadBytes.
func (w *App) Front() httpfront.Front {
	return httpfront.Front{Prefixes: []string{"/app/"}, HandleError: w.a.handleError, Mount: w.a.mount,
		BodyLimits: bodyLimits}
}

// mount adds the app's routes under /app.
func (a *app) mount(r fiber.Router) {
	g := r.Group("/app", securityHeaders, a.plainText)
	g.Get("/static/*", a.static)
	g.Get("/signin", a.signInPage)
	g.Get("/signin/oidc", a.limited, a.startOIDC)
	g.Get("/signin/callback", a.limited, a.finishOIDC)
	g.Get("/signin/link", a.limited, a.useLink)
	g.Get("/signin/discord", a.limited, a.startDiscord)
	g.Get("/signin/discord/callback", a.limited, a.finishDiscord)
	signedIn := g.Group("", a.session, a.bounded)
	signedIn.Get("/", a.home)
	signedIn.Get("/keys", a.keysPage)
	signedIn.Post("/keys", a.checkForm, a.createKey)
	signedIn.Get("/keys/:id/revoke", a.confirmRevokeKey)
	signedIn.Post("/keys/:id/revoke", a.checkForm, a.revokeKey)
	signedIn.Post("/signout", a.checkForm, a.signOut)
	signedIn.Post("/switch", a.checkForm, a.switchAccount)
	signedIn.Get("/members", a.membersPage)
	signedIn.Post("/members", a.checkForm, a.inviteMember)
	signedIn.Post("/members/:id/role", a.checkForm, a.setRole)
	signedIn.Get("/members/:id/remove", a.confirmRemoveMember)
	signedIn.Post("/members/:id/remove", a.checkForm, a.removeMember)
	signedIn.Post("/members/:id/end-sessions", a.checkForm, a.endSessions)
	signedIn.Get("/invitations", a.invitationsPage)
	signedIn.Post("/invitations/:id/:answer<regex(^(accept|decline)$)>", a.checkForm, a.answerInvitation)
	signedIn.Post("/invitations/:id/withdraw", a.checkForm, a.withdrawInvitation)
	signedIn.Get("/audit", a.auditPage)
	signedIn.Get("/usage", a.usagePage)
	signedIn.Get("/usage.csv", a.usageCSV)
	signedIn.Get("/webhooks", a.webhooksPage)
	signedIn.Post("/webhooks", a.checkForm, a.createWebhook)
	signedIn.Get("/webhooks/:id/delete", a.confirmDeleteWebhook)
	signedIn.Post("/webhooks/:id/delete", a.checkForm, a.deleteWebhook)
	signedIn.Get("/webhooks/:id/deliveries", a.webhookLog)
	signedIn.Post("/webhooks/:id/deliveries/:delivery/redeliver", a.checkForm, a.redeliver)
	signedIn.Get("/schedules", a.schedulesPage)
	signedIn.Post("/schedules", a.checkForm, a.createSchedule)
	signedIn.Post("/schedules/:id/:action<regex(^(pause|resume|run)$)>", a.checkForm, a.scheduleAction)
	signedIn.Get("/schedules/:id/edit", a.editSchedulePage)
	signedIn.Post("/schedules/:id/edit", a.checkForm, a.updateSchedule)
	signedIn.Get("/schedules/:id/delete", a.confirmDeleteSchedule)
	signedIn.Post("/schedules/:id/delete", a.checkForm, a.deleteSchedule)
	signedIn.Get("/projects", a.projectsPage)
	signedIn.Post("/projects", a.checkForm, a.addProject)
	signedIn.Get("/projects/:id/fix", a.fixPage)
	signedIn.Post("/projects/:id/fix", a.checkForm, a.fixProject)
	signedIn.Post("/projects/:id/forge", a.checkForm, a.setForgeEvents)
	signedIn.Get("/projects/:id/remove", a.confirmRemoveProject)
	signedIn.Post("/projects/:id/remove", a.checkForm, a.removeProject)
	signedIn.Get("/projects/:id/secrets", a.secretsPage)
	signedIn.Post("/projects/:id/secrets", a.checkForm, a.setSecret)
	signedIn.Get("/projects/:id/secrets/:name/remove", a.confirmRemoveSecret)
	signedIn.Post("/projects/:id/secrets/:name/remove", a.checkForm, a.removeSecret)
	signedIn.Post("/projects/:id/environment", a.checkForm, a.setEnvironment)
	signedIn.Get("/workspaces", a.workspacesPage)
	signedIn.Get("/workspaces/new", a.newWorkspacePage)
	signedIn.Post("/workspaces", a.checkForm, a.startWorkspace)
	signedIn.Get("/workspaces/:id", a.workspacePage)
	signedIn.Get("/workspaces/:id/events", a.workspaceEvents)
	signedIn.Post("/uploads/:id", a.checkUpload, a.upload)
	signedIn.Get("/workspaces/:id/files/:asset", a.file)
	signedIn.Get("/workspaces/:id/diff", a.diffPage)
	signedIn.Post("/workspaces/:id/messages", a.checkForm, a.sendMessage)
	signedIn.Post("/workspaces/:id/approvals/:approval", a.checkForm, a.decideApproval)
	signedIn.Post("/workspaces/:id/turns/:turn/stop", a.checkForm, a.stopTurn)
	signedIn.Post("/workspaces/:id/pull-request", a.checkForm, a.openPullRequest)
	signedIn.Get("/workspaces/:id/:action<regex(^(archive|unarchive|delete)$)>", a.confirmMove)
	signedIn.Post("/workspaces/:id/:action<regex(^(archive|unarchive|delete)$)>", a.checkForm, a.move)
}
