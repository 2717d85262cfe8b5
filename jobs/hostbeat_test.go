package jobs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The host's heartbeat on a fake clock: a beat at once, then every period; the first
// that goes through marks the hub's start, and a failed beat leaves that to the next.

type fakeHostCore struct {
	mu    sync.Mutex
	beats []bool // first, per beat
	fails int    // beats to fail, from the first
}

func (f *fakeHostCore) Heartbeat(_ context.Context, first bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beats = append(f.beats, first)
	if f.fails > 0 {
		f.fails--
		return errUnreachable
	}
	return nil
}

func (f *fakeHostCore) got() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.beats)
}

func TestHostBeatsAtOnceThenEveryPeriodMarkingTheStartOnce(t *testing.T) {
	for _, c := range []struct {
		name  string
		fails int
		want  []bool
	}{
		{"every beat recorded", 0, []bool{true, false, false, false}},
		{"the first beats fail: the start is marked by the first recorded", 2, []bool{true, true, true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeHostCore{fails: c.fails}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					(&HostBeat{Core: f, Every: 10 * time.Second, Log: quiet}).Run(ctx)
				}()
				time.Sleep(35 * time.Second) // sleep: fake time under testing/synctest (beats at 0, 10, 20 and 30 s)
				synctest.Wait()
				cancel()
				<-done
				if got := f.got(); !slices.Equal(got, c.want) {
					t.Fatalf("expected beats (first?) %v, got %v", c.want, got)
				}
			})
		})
	}
}
