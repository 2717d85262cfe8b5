package core

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Event streams: every open stream of a workspace on this replica is served by one
// reader, the workspace's feed. The feed reads the workspace's new events once per
// wake-up (a NOTIFY on EventsChannel) and keeps the latest in a bounded ring in memory;
// streams copy from the ring. So a NOTIFY costs one read per workspace, not one per
// stream. A stream behind the ring (resumed from an old Last-Event-ID, or a client too
// slow for the ring) reads pages of its own, each when its Pacer allows, until it
// reaches the ring. Nothing a stream does holds up the reader or another stream: the
// reader only signals, and each stream keeps nothing but its place.

// Bounds of a feed.
const (
	// eventRingEvents and eventRingBytes bound a feed's ring: a whole turn's events, and
	// at most 1 MiB of them (by eventSize), whichever is less.
	eventRingEvents = MaxTurnEvents
	eventRingBytes  = 1 << 20
	// eventFeedPoll is how often a feed reads without a wake-up: the backstop while
	// LISTEN is down (or on a hub without it).
	eventFeedPoll = 15 * time.Second
	// eventFeedRetry is how soon a feed reads again after its read failed (doubling
	// while it keeps failing, up to eventFeedPoll).
	eventFeedRetry = time.Second
)

// Pacer paces a stream's own page reads: Wait returns when the next page may be read,
// or an error when ctx ends first (or would end before then). A token bucket
// (golang.org/x/time/rate's Limiter) is one; nil reads at once.
type Pacer interface {
	Wait(ctx context.Context) error
}

// ErrStreamPaced: a stream's next page of its own would come only after its context
// ends (its pace is spent that far ahead); the stream ends, and its client resumes
// later from where it got to.
var ErrStreamPaced = errors.New("event stream paced past its end")

// EventStreamStats describe this replica's event streams (for tests and metrics).
type EventStreamStats struct {
	// Feeds is the number of workspaces with a reader, Streams the streams they serve.
	Feeds, Streams int
	// FeedReads counts the feeds' reads of new events; PageReads the pages streams
	// read themselves (behind the ring), since the hub started.
	FeedReads, PageReads int64
}

// eventFeeds are this replica's feeds, one per workspace with open streams.
type eventFeeds struct {
	// read is a feed's read of a workspace's events after a seq (at most a page,
	// opened); the streams checked the workspace's account when they subscribed.
	read func(ctx context.Context, workspaceID string, after int64) ([]*TurnEvent, error)
	// wake signals new events of a workspace (nil: the feeds poll).
	wake Wakeups
	poll time.Duration
	warn func(msg string, args ...any)

	mu    sync.Mutex
	feeds map[string]*eventFeed

	feedReads, pageReads atomic.Int64
}

// eventFeed is one workspace's reader and its ring.
type eventFeed struct {
	id     string
	cancel context.CancelFunc
	// kick has the reader read once at its start.
	kick chan struct{}

	mu sync.Mutex
	// ring holds every stored event with from < seq <= last, oldest first.
	ring      []*TurnEvent
	ringBytes int
	from      int64
	last      int64
	subs      map[*EventStream]struct{}
}

func newEventFeeds(read func(ctx context.Context, workspaceID string, after int64) ([]*TurnEvent, error), wake Wakeups,
	warn func(msg string, args ...any)) *eventFeeds {
	return &eventFeeds{read: read, wake: wake, poll: eventFeedPoll, warn: warn, feeds: map[string]*eventFeed{}}
}

// EventStream is one subscriber of a workspace's turn events: Next returns what it has
// not seen yet, Wake signals that there may be more. It is used by one goroutine.
type EventStream struct {
	feeds *eventFeeds
	feed  *eventFeed
	// page reads a page of the stream's own (scoped to its account).
	page  func(ctx context.Context, after int64) ([]*TurnEvent, error)
	pace  Pacer
	after int64
	wake  chan struct{}
	once  sync.Once
}

// StreamEvents opens a stream of the workspace's turn events after afterSeq, for a
// workspace of the account (else workspace_not_found). pace paces the pages the stream
// reads from the store itself (nil: no pacing); the events it takes from the
// workspace's feed cost no read. The caller must Close it.
func (s *Workspaces) StreamEvents(ctx context.Context, acct *Account, workspaceID string, afterSeq int64, pace Pacer) (*EventStream, error) {
	ws, err := accountWorkspace(ctx, s.store, acct, workspaceID)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	page := func(ctx context.Context, after int64) ([]*TurnEvent, error) {
		return s.ListTurnEvents(ctx, acct, ws.ID, after, MaxEventPage)
	}
	return s.feeds.subscribe(ws.ID, ws.EventSeq, afterSeq, page, pace), nil
}

// EventStreamStats describes this replica's event streams.
func (s *Admin) EventStreamStats() EventStreamStats { return s.workspaces.feeds.stats() }

// readNewEvents is the feeds' read: a page of a workspace's events after a seq, with no
// account check (each stream made its own when it subscribed).
func (s *Workspaces) readNewEvents(ctx context.Context, workspaceID string, after int64) ([]*TurnEvent, error) {
	return s.readEvents(ctx, workspaceID, after, MaxEventPage)
}

// subscribe adds a stream to the workspace's feed, started at seq (the workspace's
// latest event, read before) when the workspace has none.
func (fs *eventFeeds) subscribe(workspaceID string, seq, after int64, page func(context.Context, int64) ([]*TurnEvent, error), pace Pacer) *EventStream {
	st := &EventStream{feeds: fs, page: page, pace: pace, after: after, wake: make(chan struct{}, 1)}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.feeds[workspaceID]
	if f == nil {
		f = fs.start(workspaceID, seq)
		fs.feeds[workspaceID] = f
	}
	f.mu.Lock()
	f.subs[st] = struct{}{}
	f.mu.Unlock()
	st.feed = f
	return st
}

// start makes a workspace's feed, its ring empty after seq, and runs its reader. The
// reader waits for wake-ups from now on, and reads once at once for the events stored
// since seq was read (their NOTIFY came before it waited).
func (fs *eventFeeds) start(workspaceID string, seq int64) *eventFeed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &eventFeed{id: workspaceID, cancel: cancel, kick: make(chan struct{}, 1), from: seq, last: seq,
		subs: map[*EventStream]struct{}{}}
	w := watchKey(fs.wake, EventsChannel, workspaceID, fs.poll)
	w.kick = f.kick
	go func() {
		defer w.Close()
		failed := 0
		_, _ = w.until(ctx, noDeadline, func() (bool, time.Duration, error) {
			err := fs.readNew(ctx, f)
			if err == nil || ctx.Err() != nil {
				failed = 0
				return false, 0, nil
			}
			// Fail soft: the streams wait a little longer, and the read is tried again,
			// sooner than the poll; one warning per outage, not per retry.
			if failed++; failed == 1 {
				fs.warn("event feed", "workspace", workspaceID, "err", err)
			}
			return false, eventFeedRetry << min(failed-1, 8), nil
		})
	}()
	return f
}

// readNew reads the workspace's events past the ring, page by page, into the ring, and
// tells the streams.
func (fs *eventFeeds) readNew(ctx context.Context, f *eventFeed) error {
	for {
		f.mu.Lock()
		last := f.last
		f.mu.Unlock()
		events, err := fs.read(ctx, f.id, last)
		fs.feedReads.Add(1)
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.add(events)
		if len(events) > 0 {
			for st := range f.subs {
				signal(st.wake)
			}
		}
		f.mu.Unlock()
		if len(events) < MaxEventPage {
			return nil
		}
	}
}

// add appends events read after f.last to the ring and trims it to its bounds.
func (f *eventFeed) add(events []*TurnEvent) {
	for _, e := range events {
		if e.Seq <= f.last {
			continue
		}
		f.ring = append(f.ring, e)
		f.ringBytes += eventSize(e)
		f.last = e.Seq
	}
	drop := 0
	for bytes := f.ringBytes; len(f.ring)-drop > eventRingEvents || len(f.ring)-drop > 1 && bytes > eventRingBytes; drop++ {
		bytes -= eventSize(f.ring[drop])
	}
	if drop > 0 {
		for _, e := range f.ring[:drop] {
			f.ringBytes -= eventSize(e)
		}
		f.from = f.ring[drop-1].Seq
		// A new array, so the dropped events are not kept alive behind the slice.
		f.ring = append([]*TurnEvent(nil), f.ring[drop:]...)
	}
}

// since returns up to limit events of the ring after seq.
func (f *eventFeed) since(seq int64, limit int) []*TurnEvent {
	i := sort.Search(len(f.ring), func(i int) bool { return f.ring[i].Seq > seq })
	n := min(len(f.ring)-i, limit)
	return append([]*TurnEvent(nil), f.ring[i:i+n]...)
}

// eventSize is about what an event holds in memory.
func eventSize(e *TurnEvent) int {
	return 256 + len(e.WorkspaceID) + len(e.TurnID) + len(e.Tool) + len(e.Summary) + len(e.Delta) + len(e.ApprovalID) +
		len(e.DecidedBy) + len(e.Input) + len(e.InputSHA256) + len(e.Reason)
}

func (fs *eventFeeds) stats() EventStreamStats {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := EventStreamStats{Feeds: len(fs.feeds), FeedReads: fs.feedReads.Load(), PageReads: fs.pageReads.Load()}
	for _, f := range fs.feeds {
		f.mu.Lock()
		out.Streams += len(f.subs)
		f.mu.Unlock()
	}
	return out
}

// Next returns the events after the stream's place, at most a page, oldest first, and
// moves its place past them; none when it has seen every event there is (then wait
// for Wake). Behind the feed's ring it reads a page itself, once pace allows.
func (st *EventStream) Next(ctx context.Context) ([]*TurnEvent, error) {
	f := st.feed
	f.mu.Lock()
	if st.after >= f.from {
		events := f.since(st.after, MaxEventPage)
		f.mu.Unlock()
		st.moveTo(events)
		return events, nil
	}
	f.mu.Unlock()
	if st.pace != nil {
		if err := st.pace.Wait(ctx); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStreamPaced, err)
		}
	}
	events, err := st.page(ctx, st.after)
	st.feeds.pageReads.Add(1)
	if err != nil {
		return nil, err
	}
	st.moveTo(events)
	return events, nil
}

func (st *EventStream) moveTo(events []*TurnEvent) {
	if len(events) > 0 {
		st.after = events[len(events)-1].Seq
	}
}

// Wake is signalled when the workspace's feed has read new events.
func (st *EventStream) Wake() <-chan struct{} { return st.wake }

// Close ends the stream; the workspace's reader stops with its last stream.
func (st *EventStream) Close() {
	st.once.Do(func() {
		fs, f := st.feeds, st.feed
		fs.mu.Lock()
		defer fs.mu.Unlock()
		f.mu.Lock()
		delete(f.subs, st)
		empty := len(f.subs) == 0
		f.mu.Unlock()
		if empty && fs.feeds[f.id] == f {
			delete(fs.feeds, f.id)
			f.cancel()
		}
	})
}

// signal wakes a channel of capacity 1 without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
