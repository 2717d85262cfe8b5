package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// storedEvents is one workspace's stored events and the wake-ups of their NOTIFY: the
// feeds' store and Wakeups, in memory.
type storedEvents struct {
	mu      sync.Mutex
	events  []*TurnEvent
	fail    error
	waiters map[chan struct{}]bool
}

func newStoredEvents() *storedEvents { return &storedEvents{waiters: map[chan struct{}]bool{}} }

func (s *storedEvents) read(_ context.Context, _ string, after int64) ([]*TurnEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	i := sort.Search(len(s.events), func(i int) bool { return s.events[i].Seq > after })
	return slices.Clone(s.events[i:min(len(s.events), i+MaxEventPage)]), nil
}

func (s *storedEvents) Wait(channel, key string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	s.waiters[c] = true
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.waiters, c)
		s.mu.Unlock()
	}
}

// add stores n events of delta bytes each; notify wakes the waiters, as a NOTIFY would.
func (s *storedEvents) add(n, delta int, notify bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		seq := int64(len(s.events) + 1)
		s.events = append(s.events, &TurnEvent{Seq: seq, WorkspaceID: "ws", TurnID: "turn", Type: EventText,
			Delta: fmt.Sprint(seq) + strings.Repeat("x", delta)})
	}
	if notify {
		s.wakeAll()
	}
}

// wakeAll wakes every waiter, as the listener does after a reconnect.
func (s *storedEvents) wakeAll() {
	for c := range s.waiters {
		signal(c)
	}
}

func (s *storedEvents) waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters)
}

// countingPacer counts the waits of the streams' own pages (nil err: never refuses).
type countingPacer struct {
	mu    sync.Mutex
	waits int
	err   error
}

func (p *countingPacer) Wait(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waits++
	return p.err
}

// follower reads a stream the way the API does: Next until nothing, then wait for Wake.
type follower struct {
	st  *EventStream
	mu  sync.Mutex
	got []int64
	err error
}

func follow(ctx context.Context, st *EventStream) *follower {
	f := &follower{st: st}
	go func() {
		for {
			events, err := st.Next(ctx)
			f.mu.Lock()
			f.err = err
			for _, e := range events {
				f.got = append(f.got, e.Seq)
			}
			f.mu.Unlock()
			if err != nil {
				return
			}
			if len(events) > 0 {
				continue
			}
			select {
			case <-st.Wake():
			case <-ctx.Done():
				return
			}
		}
	}()
	return f
}

func (f *follower) seen() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

func seqs(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func newTestFeeds(t *testing.T, store *storedEvents) *eventFeeds {
	return newEventFeeds(store.read, store, func(msg string, args ...any) { t.Log(append([]any{msg}, args...)...) })
}

// followed is a store, its feeds, and one stream following them from the start, closed
// when t ends; call it in a bubble.
func followed(t *testing.T) (*storedEvents, *eventFeeds, *follower) {
	store := newStoredEvents()
	fs := newTestFeeds(t, store)
	st := fs.subscribeTo(store, 0, nil)
	t.Cleanup(st.Close)
	f := follow(t.Context(), st)
	synctest.Wait()
	return store, fs, f
}

func (fs *eventFeeds) subscribeTo(store *storedEvents, after int64, pace Pacer) *EventStream {
	page := func(ctx context.Context, after int64) ([]*TurnEvent, error) { return store.read(ctx, "ws", after) }
	store.mu.Lock()
	seq := int64(len(store.events)) // what the workspace's row says when the stream opens
	store.mu.Unlock()
	return fs.subscribe("ws", seq, after, page, pace)
}

// A hundred streams of one workspace see every event once and in order, while the
// workspace's events are read once per batch (per NOTIFY), whatever the number of
// streams; the reader stops with the last stream.
func TestEventStreamsOfAWorkspaceShareOneRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newStoredEvents()
		store.add(3, 10, false)
		fs := newTestFeeds(t, store)
		ctx, cancel := context.WithCancel(t.Context())
		var followers []*follower
		for range 100 {
			followers = append(followers, follow(ctx, fs.subscribeTo(store, 0, nil)))
		}
		synctest.Wait()
		start := fs.stats()
		if start.Feeds != 1 || start.Streams != 100 || start.FeedReads != 1 || start.PageReads != 100 {
			t.Fatalf("expected one feed of 100 streams, read once at its start, and a page of each stream's own for the events before; got %+v", start)
		}
		const batches = 10
		for range batches {
			store.add(7, 10, true)
			synctest.Wait()
		}
		want := seqs(1, 3+batches*7)
		for i, f := range followers {
			if got := f.seen(); !slices.Equal(got, want) {
				t.Fatalf("stream %d: expected seqs %v, got %v", i, want, got)
			}
		}
		if got := fs.stats(); got.FeedReads != start.FeedReads+batches || got.PageReads != start.PageReads {
			t.Fatalf("expected one feed read per batch (%d) and no page of the streams' own, got %+v after %+v", batches, got, start)
		}
		cancel()
		for _, f := range followers {
			f.st.Close()
		}
		synctest.Wait()
		if got := fs.stats(); got.Feeds != 0 || got.Streams != 0 || store.waiting() != 0 {
			t.Fatalf("expected no feed and no waiter once the streams closed, got %+v and %d waiters", got, store.waiting())
		}
	})
}

// A stream that resumes from past the workspace's last event (a Last-Event-ID made up)
// waits for events past it and holds up no other stream.
func TestAStreamAheadOfTheEventsHoldsUpNoOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newStoredEvents()
		store.add(3, 10, false)
		fs := newTestFeeds(t, store)
		ahead := follow(t.Context(), fs.subscribeTo(store, 10, nil))
		t.Cleanup(ahead.st.Close)
		synctest.Wait()
		behind := follow(t.Context(), fs.subscribeTo(store, 0, nil))
		t.Cleanup(behind.st.Close)
		for range 3 {
			store.add(3, 10, true)
			synctest.Wait()
		}
		if got := behind.seen(); !slices.Equal(got, seqs(1, 12)) {
			t.Fatalf("expected the other stream to see every event, got %v", got)
		}
		if got := ahead.seen(); !slices.Equal(got, seqs(11, 12)) {
			t.Fatalf("expected the stream ahead to see the events past 10, got %v", got)
		}
	})
}

// A stream that does not read while three rings' worth of events pass holds up neither
// the reader nor the other streams; it then catches up with pages of its own, each
// paced, and goes on from the ring.
func TestASlowEventStreamCatchesUpByItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, fs, fast := followed(t)
		ctx := t.Context()
		pace := &countingPacer{}
		slow := fs.subscribeTo(store, 0, pace)
		defer slow.Close()
		if got, err := slow.Next(ctx); err != nil || len(got) != 0 {
			t.Fatalf("expected no events yet, got %v %v", got, err)
		}
		synctest.Wait()
		const total = 3 * eventRingEvents
		for range total / 100 {
			store.add(100, 10, true)
			synctest.Wait()
		}
		if got := fast.seen(); !slices.Equal(got, seqs(1, total)) {
			t.Fatalf("expected the fast stream to have every event, got %d of %d", len(got), total)
		}
		before := fs.stats()
		var got []int64
		for {
			events, err := slow.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) == 0 {
				break
			}
			for _, e := range events {
				got = append(got, e.Seq)
			}
		}
		if !slices.Equal(got, seqs(1, total)) {
			t.Fatalf("expected the slow stream to catch up on every event once, in order; got %d events", len(got))
		}
		behind := total - eventRingEvents
		pages := int64((behind + MaxEventPage - 1) / MaxEventPage)
		if after := fs.stats(); after.PageReads-before.PageReads != pages || pace.waits != int(pages) {
			t.Fatalf("expected %d pages of its own (%d events behind the ring), each paced, got %d pages and %d waits",
				pages, behind, after.PageReads-before.PageReads, pace.waits)
		}
		store.add(5, 10, true)
		synctest.Wait()
		if events, _ := slow.Next(ctx); len(events) != 5 || fs.stats().PageReads != before.PageReads+pages {
			t.Fatalf("expected the caught-up stream to take the next 5 events from the ring, got %d", len(events))
		}
	})
}

// The ring is bounded in bytes as well as in events.
func TestEventFeedRingIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name         string
		events, size int
	}{
		{"many small events", 5 * eventRingEvents, 10},
		{"few large events", 50, 100 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store, _, f := followed(t)
				for range 10 {
					store.add(tc.events/10, tc.size, true)
					synctest.Wait()
				}
				if got := f.seen(); len(got) != tc.events {
					t.Fatalf("expected %d events streamed, got %d", tc.events, len(got))
				}
				feed := f.st.feed
				feed.mu.Lock()
				defer feed.mu.Unlock()
				if len(feed.ring) > eventRingEvents || feed.ringBytes > eventRingBytes || len(feed.ring) == 0 ||
					feed.ring[len(feed.ring)-1].Seq != int64(tc.events) || feed.from != feed.ring[0].Seq-1 {
					t.Fatalf("expected a ring of at most %d events and %d bytes ending at %d, got %d events, %d bytes, from %d",
						eventRingEvents, eventRingBytes, tc.events, len(feed.ring), feed.ringBytes, feed.from)
				}
			})
		})
	}
}

// A feed reads again when woken with no NOTIFY of its own (the listener reconnected and
// notifications may have been missed), when its poll comes round, and after a failed
// read.
func TestEventFeedReadsAgainWithoutANotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, _, f := followed(t)

		store.add(2, 10, false)
		synctest.Wait()
		if got := f.seen(); len(got) != 0 {
			t.Fatalf("expected nothing before a wake-up, got %v", got)
		}
		store.mu.Lock()
		store.wakeAll()
		store.mu.Unlock()
		synctest.Wait()
		if got := f.seen(); !slices.Equal(got, seqs(1, 2)) {
			t.Fatalf("expected the events missed read on a reconnect's wake-up, got %v", got)
		}

		store.add(2, 10, false)
		synctest.Wait()
		sleep(eventFeedPoll)
		if got := f.seen(); !slices.Equal(got, seqs(1, 4)) {
			t.Fatalf("expected the events read by the poll, got %v", got)
		}

		store.mu.Lock()
		store.fail = errors.New("store down")
		store.mu.Unlock()
		store.add(2, 10, true)
		synctest.Wait()
		store.mu.Lock()
		store.fail = nil
		store.mu.Unlock()
		if got := f.seen(); len(got) != 4 {
			t.Fatalf("expected nothing new while the store fails, got %v", got)
		}
		sleep(eventFeedRetry)
		if got := f.seen(); !slices.Equal(got, seqs(1, 6)) {
			t.Fatalf("expected the events read on the retry, got %v", got)
		}
	})
}

// A stream whose pace would have it wait past its end says so.
func TestAPacedEventStreamEndsWithErrStreamPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newStoredEvents()
		store.add(3, 10, false)
		fs := newTestFeeds(t, store)
		st := fs.subscribeTo(store, 0, &countingPacer{err: errors.New("rate: Wait(n=1) would exceed context deadline")})
		defer st.Close()
		if _, err := st.Next(t.Context()); !errors.Is(err, ErrStreamPaced) {
			t.Fatalf("expected ErrStreamPaced, got %v", err)
		}
	})
}

// sleep lets the bubble's clock run d, then waits for its goroutines to settle.
func sleep(d time.Duration) {
	time.Sleep(d) // sleep: fake time under testing/synctest: the bubble's clock runs d
	synctest.Wait()
}
