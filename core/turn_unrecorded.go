package core

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Retries of writes that must survive a store outage (a finished turn's record). The
// waits are real time, not the injected clock: they pace calls to a real database.
const (
	storeRetryFirst     = 100 * time.Millisecond
	storeRetryMax       = 2 * time.Second
	storeAttemptTimeout = 10 * time.Second
	// stoppingGrace bounds the retries once the step's context has ended (the hub
	// stopping, or the workspace moved on): a turn interrupted then is still recorded
	// when the store answers, but shutdown does not wait on a store that is gone.
	stoppingGrace = 10 * time.Second
	// keptFor bounds how long an unrecorded result is kept for the next claim. Another
	// replica may have ended the turn meanwhile; then nothing takes it.
	keptFor = 24 * time.Hour
)

// retryStore runs op until it succeeds, fails for a reason other than the store being
// unreachable or busy, or the claim is lost (ctx's cause is ErrLeaseLost). While ctx
// lives it retries with backoff; once ctx has ended it retries for stoppingGrace more.
// Each attempt gets a context of its own that outlives ctx's cancellation.
func (s *Worker) retryStore(ctx context.Context, op func(context.Context) error) error {
	wait := storeRetryFirst
	var stopBy time.Time
	for {
		if ctx.Err() != nil && stopBy.IsZero() {
			stopBy = time.Now().Add(stoppingGrace)
		}
		deadline := time.Now().Add(storeAttemptTimeout)
		if !stopBy.IsZero() && stopBy.Before(deadline) {
			deadline = stopBy
		}
		attemptCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		err := op(attemptCtx)
		cancel()
		if err == nil || !storeDown(err) || errors.Is(context.Cause(ctx), ErrLeaseLost) {
			return err
		}
		if !stopBy.IsZero() && time.Now().Add(wait).After(stopBy) {
			return err
		}
		var ended <-chan struct{}
		if stopBy.IsZero() {
			ended = ctx.Done() // once: in the grace period it is closed for good
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ended:
			t.Stop()
		}
		if errors.Is(context.Cause(ctx), ErrLeaseLost) {
			return err
		}
		wait = min(2*wait, storeRetryMax)
	}
}

// storeDown reports whether err is the store being unreachable, slow or contended,
// which waiting may cure; anything else (the lease lost, a bug) is final.
func storeDown(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrContended) || errors.Is(err, context.DeadlineExceeded)
}

// keepUnrecorded logs why a finished turn was not recorded and, when the store was
// unreachable, keeps its result for the next claim of the workspace (endStaleTurn),
// which records it as it was instead of ending the turn interrupted.
func (s *Worker) keepUnrecorded(ws *Workspace, msg *StoredMessage, r TurnResult, err error) {
	attrs := []any{"workspace", ws.ID, "turn", msg.TurnID, "outcome", r.Outcome, "err", err}
	switch {
	case storeDown(err):
		s.unrecorded.keep(msg.ID, r)
		s.log().Warn("turn not recorded: the database is unreachable; the result is kept for the next claim of the workspace", attrs...)
	case errors.Is(err, ErrNoRows), errors.Is(err, ErrLeaseLost):
		s.log().Warn("turn not recorded: the worker lost its lease; the next claim ends it", attrs...)
	default:
		s.log().Error("turn not recorded; the next claim ends it interrupted", attrs...)
	}
}

// unrecordedTurns holds finished turns' results the store could not take, by user
// message id. The zero value is ready.
type unrecordedTurns struct {
	mu      sync.Mutex
	results map[string]keptResult
}

type keptResult struct {
	r  TurnResult
	at time.Time
}

func (u *unrecordedTurns) keep(messageID string, r TurnResult) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.results == nil {
		u.results = map[string]keptResult{}
	}
	now := time.Now()
	for id, k := range u.results {
		if now.Sub(k.at) > keptFor {
			delete(u.results, id)
		}
	}
	u.results[messageID] = keptResult{r: r, at: now}
}

func (u *unrecordedTurns) take(messageID string) (TurnResult, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k, ok := u.results[messageID]
	delete(u.results, messageID)
	return k.r, ok
}
