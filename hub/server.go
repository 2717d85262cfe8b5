package hub

import (
	"context"
	"strings"

	"github.com/wshub/wshub/api"
	discordbot "github.com/wshub/wshub/bots/discord"
	slackbot "github.com/wshub/wshub/bots/slack"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/httpfront"
	"github.com/wshub/wshub/internal/keyrate"
	"github.com/wshub/wshub/internal/sse"
	"github.com/wshub/wshub/web"
)

// serve builds the hub's one HTTP server (internal/httpfront: timeouts, buffers,
// proxies, framing and body limits) and mounts the front-ends on it, each with its
// paths, body limits and error answers: the API, the app, and the bots when
// configured. The bots' endpoints answer their platforms themselves; what fails before
// their handlers (a body too large, an unknown path) is answered by the API, which
// owns every path no one else does, as it always was.
//
// The API and the app share their bounds: one set of request buckets (a key's, a
// member's), one of stream-page paces, one count of each account's open streams.
func (h *Hub) serve(clock core.Clock) error {
	cfg, svc, log := h.Config, h.Service, h.Log
	srv := httpfront.New(httpfront.Options{Log: log, TrustedProxies: cfg.TrustedProxies,
		Timeouts: httpfront.Timeouts{Read: cfg.HTTPReadTimeout, Write: cfg.HTTPWriteTimeout, Idle: cfg.HTTPIdleTimeout}})
	h.App = srv.App
	requests, pages := keyrate.New(cfg.APIRate, cfg.APIBurst), keyrate.New(cfg.StreamPageRate, cfg.StreamPageBurst)
	accountStreams := sse.NewPlaces(cfg.MaxStreamsPerAccount)
	streamsClosing, endStreams := context.WithCancel(context.Background())
	h.endStreams = endStreams
	srv.Add(api.New(api.UseCases{Workspaces: svc.Workspaces, Webhooks: svc.Webhooks, Schedules: svc.Schedules, RuntimeAPI: svc.RuntimeAPI}, api.Options{Log: log, Ready: h.Store,
		ReadyDetail: map[string]string{"agentLimits": h.AgentLimits}, StreamFor: srv.StreamFor(),
		Requests: requests, MaxStreamsPerKey: cfg.MaxStreamsPerKey, AccountStreams: accountStreams, StreamsClosing: streamsClosing, StreamPages: pages}).Front())
	var err error
	if h.Web, err = web.New(svc.App, svc.AppWorkspaces, svc.AppProjects, web.Options{Log: log, Schedules: svc.AppSchedules, PublicURL: strings.TrimSuffix(cfg.PublicURL, "/"),
		OIDC: web.OIDC{Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret, Name: cfg.OIDCName,
			SlackIssuer: cfg.OIDCSlackIssuer},
		Discord:  discordSignIn(cfg),
		Insecure: cfg.AppInsecure,
		Requests: requests, MaxStreams: cfg.MaxStreamsPerKey, AccountStreams: accountStreams, StreamsClosing: streamsClosing, StreamPages: pages,
		StreamFor: srv.StreamFor()}); err != nil {
		return err
	}
	srv.Add(h.Web.Front())
	if cfg.ForgeEvents {
		srv.Add(h.forgeFront())
	}
	if cfg.SlackBotToken != "" {
		h.Slack = slackbot.New(svc.Chat, slackbot.Config{BotToken: cfg.SlackBotToken, SigningSecret: cfg.SlackSigningSecret,
			AppToken: cfg.SlackAppToken, APIURL: cfg.SlackAPIURL}, log)
		srv.App.Post("/slack/events", h.Slack.EventsHandler)
		srv.App.Post("/slack/interactivity", h.Slack.InteractivityHandler)
	}
	if cfg.DiscordBotToken != "" {
		if h.Discord, err = discordbot.New(svc.Chat, discordbot.Config{BotToken: cfg.DiscordBotToken, PublicKey: cfg.DiscordPublicKey,
			AppID: cfg.DiscordAppID, HTTPClient: cfg.DiscordHTTPClient, Clock: clock}, log); err != nil {
			return err
		}
		srv.App.Post("/discord/interactions", h.Discord.InteractionsHandler)
	}
	return nil
}
