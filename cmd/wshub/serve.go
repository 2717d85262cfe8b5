package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/internal/httpfront"
)

func migrate(ctx context.Context, env environ) error {
	cfg, err := hub.LoadConfigFrom(env.list())
	if err != nil {
		return err
	}
	store, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{MaxOpenConns: 2})
	if err != nil {
		return err
	}
	defer store.Close()
	return postgres.Migrate(ctx, store.DB().DB)
}

func serve(ctx context.Context, env environ, log *slog.Logger) error {
	cfg, err := hub.LoadConfigFrom(env.list())
	if err != nil {
		return err
	}
	if err := checkProviderOS(goruntime.GOOS, cfg.Providers); err != nil {
		return err
	}
	return serveConfig(ctx, cfg, log)
}

// serveConfig runs the hub until ctx ends, then drains requests for up to 10 seconds.
func serveConfig(ctx context.Context, cfg hub.Config, log *slog.Logger) error {
	if cfg.Self == "" {
		// This binary serves Claude Code's permission prompt tool (approval-mcp).
		cfg.Self, _ = os.Executable()
	}
	h, err := hub.Open(ctx, cfg, log, hub.Options{})
	if err != nil {
		return err
	}
	defer h.Close()
	if cfg.MigrateOnStart {
		if err := postgres.Migrate(ctx, h.Store.DB().DB); err != nil {
			return err
		}
	}
	if cfg.WebhookAllowInsecure {
		log.Warn("WSHUB_WEBHOOK_ALLOW_INSECURE is on: webhooks may target http and loopback addresses; never use this in production")
	}
	if cfg.Sandbox == "none" {
		log.Warn("WSHUB_SANDBOX=none: agents run unconfined, as the hub's user, and can read everything the hub can (other workspaces, the data directory, its environment); never use this in production")
	}
	if cfg.AgentLimits == "off" {
		log.Warn("WSHUB_AGENT_LIMITS=off: turns run with no memory, process or CPU limit of their own; one turn can take the whole host")
	}
	if h.AgentLimitsMissing != "" {
		log.Warn(h.AgentLimitsMissing)
	}
	if h.ContentKeyID == "" {
		log.Warn("WSHUB_CONTENT_KEY is not set: sending messages, uploads and webhook creation answer 503")
	}
	// Listened on first: a port in use fails the start before any work is claimed.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		h.SetOwnURL(fmt.Sprintf("http://127.0.0.1:%d", a.Port))
	}
	_, metrics, err := serveMetrics(h, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer metrics()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	ran := make(chan error, 1)
	go func() { ran <- h.Run(runCtx) }()
	errc := make(chan error, 1)
	go func() { errc <- h.App.Listener(httpfront.Listener(ln)) }()
	log.Info("wshub serving", "addr", cfg.Addr, "dataDir", cfg.DataDir, "host", h.Config.HostID, "sandbox", cmp.Or(cfg.Sandbox, "bwrap"),
		"agentLimits", h.AgentLimits, "contentKeyId", h.ContentKeyID)
	var listenErr error
	select {
	case err := <-errc:
		listenErr = fmt.Errorf("listen %s: %w", cfg.Addr, err)
	case <-ctx.Done():
		log.Info("wshub shutting down")
	}
	// Stop taking requests (ending the event streams first: the shutdown waits for open
	// responses), then interrupt and record running turns before closing.
	h.EndStreams()
	if err := h.App.ShutdownWithTimeout(10 * time.Second); err != nil && !errors.Is(err, context.Canceled) && listenErr == nil {
		listenErr = err
	}
	stopRun()
	if err := <-ran; err != nil && listenErr == nil {
		listenErr = err
	}
	return listenErr
}

// serveMetrics serves /metrics on WSHUB_METRICS_ADDR, when it is set, until the
// returned function stops it, and returns the address it listens on ("" when off).
// Listened on at once, so a port in use fails the start.
func serveMetrics(h *hub.Hub, log *slog.Logger) (addr string, stop func(), err error) {
	if h.Config.MetricsAddr == "" {
		log.Info("metrics are off: set WSHUB_METRICS_ADDR (e.g. 127.0.0.1:9090) to serve /metrics")
		return "", func() {}, nil
	}
	ln, err := net.Listen("tcp", h.Config.MetricsAddr)
	if err != nil {
		return "", nil, fmt.Errorf("WSHUB_METRICS_ADDR: listen %s: %w", h.Config.MetricsAddr, err)
	}
	addr = ln.Addr().String()
	srv := h.MetricsServer()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", "addr", addr, "err", err)
		}
	}()
	log.Info("metrics served", "addr", addr)
	return addr, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
