package jobs

import (
	"context"
	"log/slog"
	"time"
)

// HostBeat records the hub's host alive (HostCore.Heartbeat) at once and then every
// Every, until ctx ends. A host whose hubs have all stopped beating for the lost-after
// setting is lost, and the sweeps fail its local workspaces (core/host.go).
type HostBeat struct {
	Core  HostCore
	Every time.Duration
	Log   *slog.Logger
}

// Run beats until ctx ends. A beat that fails is not retried before the next: the
// lost-after setting is several beats long.
func (b *HostBeat) Run(ctx context.Context) {
	log := b.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(b.Every)
	defer t.Stop()
	first := true // until a beat has recorded this hub's start
	for {
		// Bounded, so a hung connection cannot hold the beats back unseen.
		bctx, cancel := context.WithTimeout(ctx, b.Every)
		err := b.Core.Heartbeat(bctx, first)
		cancel()
		switch {
		case err == nil:
			first = false
		case ctx.Err() == nil:
			log.Warn("host heartbeat", "err", err) // fail open: the next beat tries again
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
