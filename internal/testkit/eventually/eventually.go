// Package eventually is the tests' one way to wait until something holds: it polls a
// condition at a short interval that grows, and fails the test with what it waited for
// when the time given runs out. A test waits for the event itself with it, never for a
// fixed time.
package eventually

import (
	"fmt"
	"testing"
	"time"
)

// The interval starts short, so what comes in milliseconds is seen at once, and grows
// to maxPoll, so a wait of minutes does not hammer what it polls.
const (
	firstPoll = 2 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// Eventually polls cond until it holds, failing t ("expected <what> within <within>")
// when it has not within that time.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	NoError(t, within, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// NoError polls f until it returns nil, failing t with f's last error when it has not
// within that time.
func NoError(t testing.TB, within time.Duration, what string, f func() error) {
	t.Helper()
	Value(t, within, what, func() (struct{}, error) { return struct{}{}, f() })
}

// Value polls f until it returns no error and gives f's value then, failing t with f's
// last error when it has not within that time. An error can carry what was last seen.
func Value[T any](t testing.TB, within time.Duration, what string, f func() (T, error)) T {
	t.Helper()
	v, err := poll(within, f)
	if err == errNotYet {
		t.Fatalf("expected %s within %s", what, within)
	} else if err != nil {
		t.Fatalf("expected %s within %s; last: %v", what, within, err)
	}
	return v
}

// Within polls cond until it holds and says whether it did within that time, for a
// test that reports the miss itself or goes on either way.
func Within(within time.Duration, cond func() bool) bool {
	_, err := poll(within, func() (struct{}, error) {
		if cond() {
			return struct{}{}, nil
		}
		return struct{}{}, errNotYet
	})
	return err == nil
}

var errNotYet = fmt.Errorf("not yet")

// poll calls f at least once, then until it succeeds or within has passed.
func poll[T any](within time.Duration, f func() (T, error)) (T, error) {
	deadline := time.Now().Add(within)
	wait := firstPoll
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		v, err := f()
		if err == nil {
			return v, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return v, err
		}
		timer.Reset(min(wait, left))
		<-timer.C
		wait = min(wait*3/2+time.Millisecond, maxPoll)
	}
}
