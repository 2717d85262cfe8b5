package jobs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wshub/wshub/core"
)

// The sweeps' schedule on a fake clock, which starts at midnight (UTC, 2000-01-01).

// fakeSweepsCore records the tick each sweep was asked to run for.
type fakeSweepsCore struct {
	mu                                     sync.Mutex
	lifecycle, runtimes, messages, pruning []time.Time
	lostAfter                              []time.Duration // the lost-host sweep's setting, each run
	fail                                   error
}

func (f *fakeSweepsCore) record(to *[]time.Time, tick time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	*to = append(*to, tick)
	return f.fail
}

func (f *fakeSweepsCore) SweepLifecycle(_ context.Context, _ core.LifecycleConfig, tick time.Time) (int, error) {
	return 0, f.record(&f.lifecycle, tick)
}

func (f *fakeSweepsCore) SweepRuntimes(_ context.Context, _ core.RuntimeSweepConfig, tick time.Time) (int, error) {
	return 0, f.record(&f.runtimes, tick)
}

func (f *fakeSweepsCore) SweepMessages(_ context.Context, tick time.Time) (int64, int64, error) {
	return 0, 0, f.record(&f.messages, tick)
}

func (f *fakeSweepsCore) SweepRetention(_ context.Context, _ time.Duration, tick time.Time) (core.Pruned, error) {
	return core.Pruned{}, f.record(&f.pruning, tick)
}

func (f *fakeSweepsCore) SweepLostHosts(_ context.Context, lostAfter time.Duration) (int, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostAfter = append(f.lostAfter, lostAfter)
	return 0, 0, f.fail
}

func (f *fakeSweepsCore) lostHostRuns() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lostAfter)
}

func (f *fakeSweepsCore) ticks() (lifecycle, runtimes, messages, pruning []time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lifecycle), slices.Clone(f.runtimes), slices.Clone(f.messages), slices.Clone(f.pruning)
}

func runSweeps(t *testing.T, f *fakeSweepsCore) {
	s := &Sweeps{Core: f, Log: quiet, Every: 30 * time.Second, HostLostAfter: 10 * time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("sweeps: %v", err)
		}
	})
}

func TestSweepsRunForTicksAlignedToTheIntervalAndPruneForTheHour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		midnight := time.Now()
		f := &fakeSweepsCore{}
		runSweeps(t, f)
		time.Sleep(95 * time.Second) // sleep: fake time under testing/synctest: the minutes the sweeps run across
		synctest.Wait()
		every := []time.Time{midnight.Add(30 * time.Second), midnight.Add(time.Minute), midnight.Add(90 * time.Second)}
		lifecycle, runtimes, messages, pruning := f.ticks()
		for name, got := range map[string][]time.Time{"lifecycle": lifecycle, "runtimes": runtimes, "messages": messages} {
			if !slices.Equal(got, every) {
				t.Errorf("expected the %s sweep for the ticks %v, got %v", name, every, got)
			}
		}
		// Every tick competes for the hour's pruning: replicas agree on the hour.
		if want := []time.Time{midnight, midnight, midnight}; !slices.Equal(pruning, want) {
			t.Errorf("expected retention for the hour's tick each time, got %v", pruning)
		}
		// Lost hosts are looked for at every tick, with the setting.
		if got, want := f.lostHostRuns(), []time.Duration{10 * time.Minute, 10 * time.Minute, 10 * time.Minute}; !slices.Equal(got, want) {
			t.Errorf("expected the lost-host sweep at every tick with lost-after %v, got %v", want, got)
		}
	})
}

func TestASweepThatFailsRunsAgainAtTheNextTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSweepsCore{fail: errUnreachable}
		runSweeps(t, f)
		time.Sleep(65 * time.Second) // sleep: fake time under testing/synctest: the minutes the sweeps run across
		synctest.Wait()
		lifecycle, runtimes, messages, pruning := f.ticks()
		lost := f.lostHostRuns()
		if len(lifecycle) != 2 || len(runtimes) != 2 || len(messages) != 2 || len(pruning) != 2 || len(lost) != 2 {
			t.Fatalf("expected every sweep tried at both ticks despite failing, got %d, %d, %d, %d and %d",
				len(lifecycle), len(runtimes), len(messages), len(pruning), len(lost))
		}
	})
}
