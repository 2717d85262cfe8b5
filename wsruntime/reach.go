package wsruntime

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// HubLostAfterVar names the setting of Config.HubLostAfter.
const HubLostAfterVar = "WSHUB_RUNTIME_HUB_LOST_AFTER"

// DefaultHubLostAfter is long enough for a hub to be restarted, upgraded or taken over
// by another replica, and short enough that a machine whose hub is gone for good does
// not keep its agent working for nobody.
const DefaultHubLostAfter = 10 * time.Minute

// ExitHubLost is the exit code of a runtime that reached no hub for HubLostAfter.
// Unlike ExitStopped, its supervisor may start it again: the new process calls
// whichever hub answers then.
const ExitHubLost = 4

// ErrHubLost wraps the reason a runtime gave up on its hub.
var ErrHubLost = errors.New("the hub could not be reached")

// reach tracks whether the hub answers, across all the runtime's calls at once (the
// long polls, the heartbeat, a turn's events): the first call that fails on the way
// after an answer starts the clock, and any answer stops it. A 4xx is an answer: the
// hub is there and has decided. Counting from the failure, not from the last answer,
// keeps a long poll that was in flight for 25 s from counting as 25 s of outage.
type reach struct {
	after time.Duration
	now   func() time.Time

	mu    sync.Mutex
	since time.Time // the first failure since the hub last answered; zero while it answers
}

func (r *reach) answered() {
	r.mu.Lock()
	r.since = time.Time{}
	r.mu.Unlock()
}

// failed records a call that failed on the way and reports how long the hub has
// been unreachable.
func (r *reach) failed() time.Duration {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() {
		r.since = now
	}
	return now.Sub(r.since)
}

// hubLostError is why a runtime gave up on its hub.
type hubLostError struct {
	url         string
	down, after time.Duration
	last        error // the last failure
}

// why is the sentence the runtime logs as it ends.
func (e *hubLostError) why() string {
	return fmt.Sprintf("the hub at %s has been unreachable for %s, longer than %s (%s): stopping any running turn and exiting",
		e.url, e.down.Round(100*time.Millisecond), HubLostAfterVar, e.after)
}

func (e *hubLostError) Error() string { return e.why() + ": " + e.last.Error() }

func (e *hubLostError) Unwrap() []error { return []error{ErrHubLost, e.last} }
