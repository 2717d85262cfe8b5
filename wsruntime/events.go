package wsruntime

import (
	"context"
	"sync"
	"time"

	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// eventRelay sends a running turn's events to the hub in batches (one call per
// relayEvery at most). Each batch names the position of its first event in the turn,
// so a batch sent again after a lost answer is not stored twice. Events are a live
// view: a batch the hub will not take is dropped, never held up for the turn.
type eventRelay struct {
	r    *Runtime
	turn string
	mu   sync.Mutex
	// pending are the events not yet sent; sent is how many of the turn's were.
	pending []runtimewire.Event
	sent    int
	// flushing serialises sends (the loop's and sync's), so events keep their order.
	flushing sync.Mutex
	wake     chan struct{}
	closing  chan struct{}
	done     chan struct{}
	// send posts a batch whose first event is the first-th of the run.
	send func(ctx context.Context, first int, batch []runtimewire.Event) error
}

const relayEvery = 150 * time.Millisecond

func (r *Runtime) relayEvents(ctx context.Context, turnID string) *eventRelay {
	return r.relay(ctx, turnID, func(ctx context.Context, first int, batch []runtimewire.Event) error {
		_, err := r.hub.call(ctx, request{method: "POST", path: "/turns/" + turnID + "/events",
			json: runtimewire.Events{First: first, Events: batch}}, nil)
		return err
	})
}

// relay starts a relay of a run's events (a turn's, a script's) through send.
func (r *Runtime) relay(ctx context.Context, run string, send func(ctx context.Context, first int, batch []runtimewire.Event) error) *eventRelay {
	e := &eventRelay{r: r, turn: run, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{}), send: send}
	go e.loop(ctx)
	return e
}

func (e *eventRelay) add(ev core.TurnEvent) {
	e.mu.Lock()
	if e.sent+len(e.pending) < core.MaxTurnEvents {
		e.pending = append(e.pending, runtimewire.Event{Type: string(ev.Type), Tool: ev.Tool, Summary: ev.Summary, Delta: ev.Delta})
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// close sends what is left; the turn is reported after it.
func (e *eventRelay) close() {
	close(e.closing)
	<-e.done
}

func (e *eventRelay) loop(ctx context.Context) {
	defer close(e.done)
	for {
		// The first event of a quiet spell goes at once; then at most one call per
		// relayEvery, while the next events gather.
		select {
		case <-e.wake:
		case <-e.closing:
			e.flush(ctx)
			return
		}
		e.flush(ctx)
		select {
		case <-time.After(relayEvery):
		case <-e.closing:
		}
	}
}

// sync sends what is pending now, before the caller's own call (an approval) that
// must follow it.
func (e *eventRelay) sync(ctx context.Context) { e.flush(ctx) }

func (e *eventRelay) flush(ctx context.Context) {
	e.flushing.Lock()
	defer e.flushing.Unlock()
	for {
		e.mu.Lock()
		n := min(len(e.pending), runtimewire.MaxEventsBatch)
		first, batch := e.sent, e.pending[:n:n]
		e.mu.Unlock()
		if n == 0 || ctx.Err() != nil {
			return
		}
		if err := e.send(ctx, first, batch); err != nil {
			e.r.log.Warn("turn events not sent", "turn", e.turn, "events", n, "err", err)
		}
		e.mu.Lock()
		e.pending, e.sent = e.pending[n:], e.sent+n
		e.mu.Unlock()
	}
}
