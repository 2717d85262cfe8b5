package limits_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// allEvents reads every stored event of the workspace, page by page.
func allEvents(t *testing.T, h *hubtest.Hub, id string) []hubtest.Event {
	t.Helper()
	var out []hubtest.Event
	for {
		page := hubtest.EventsPage(t, h, id, int64(len(out)))
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
	}
}

func seqsOf(events []hubtest.Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// waitStreams polls the hub's event stream figures until cond holds.
func waitStreams(t *testing.T, h *hubtest.Hub, what string, cond func(feeds, streams int) bool) {
	t.Helper()
	eventually.NoError(t, 45*time.Second, what, func() error { // two heartbeats
		if s := h.Service.Admin.EventStreamStats(); !cond(s.Feeds, s.Streams) {
			return fmt.Errorf("got %+v", s)
		}
		return nil
	})
}

// A thousand streams open on one workspace see every event of a turn exactly once and in
// order, and the store is read for them by one reader: no stream reads a page of its
// own while it is live, and the reader reads at most once per batch of events (each
// batch is one NOTIFY), not once per stream. Another account's key gets a 404. The
// reader stops with the last stream.
func TestEventStreamsOfOneWorkspaceShareItsReads(t *testing.T) {
	t.Parallel()
	const streams = 1000
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) {
		c.MaxStreamsPerKey, c.MaxStreamsPerAccount = streams, streams
		// A stream lives the write timeout less 5 s; opening and reading a thousand of
		// them on a busy machine can take longer than the default minute, and a stream
		// that ended would be counted out of the reader.
		c.HTTPWriteTimeout = 10 * time.Minute
	}))
	id := hubtest.CreateOn(t, h, "local", "steps 1")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	first := seqsOf(allEvents(t, h, id))
	// Another account's key cannot join the workspace's reader: the workspace is not
	// there for it.
	_, other := h.NewAccount(true)
	h.Call("GET", "/v1/api/workspaces/"+id+"/events", other, nil, "Accept", "text/event-stream").Expect(t, 404, "cloud_workspace_not_found")

	var chans []<-chan hubtest.Event
	var drops []func()
	for range streams {
		events, drop := hubtest.Stream(t, h, id, "")
		chans, drops = append(chans, events), append(drops, drop)
	}
	for i, events := range chans {
		if got := seqsOf(hubtest.UntilTurnFinished(t, events)); !slices.Equal(got, first) {
			t.Fatalf("stream %d: expected the first turn's events %v, got %v", i, first, got)
		}
	}
	before := h.Service.Admin.EventStreamStats()
	if before.Feeds != 1 || before.Streams != streams {
		t.Fatalf("expected one reader for %d streams, got %+v", streams, before)
	}

	hubtest.Send(t, h, id, "steps 30")
	var second []int64
	for i, events := range chans {
		got := seqsOf(hubtest.UntilTurnFinished(t, events))
		if i == 0 {
			second = got
		}
		if !slices.Equal(got, second) {
			t.Fatalf("stream %d: expected the second turn's events %v, got %v", i, second, got)
		}
	}
	if stored := seqsOf(allEvents(t, h, id)); !slices.Equal(stored, append(slices.Clone(first), second...)) {
		t.Fatalf("expected the streams to have seen the stored events %v, got %v then %v", stored, first, second)
	}
	after := h.Service.Admin.EventStreamStats()
	reads := after.FeedReads - before.FeedReads
	if pages := after.PageReads - before.PageReads; pages != 0 || reads < 1 || reads > int64(len(second))+1 {
		t.Fatalf("expected no page of the streams' own and at most one read per batch (%d events) for all %d streams, got %d pages and %d reads",
			len(second), streams, pages, reads)
	}
	// The hub learns that a client went away when a write to it fails: the events of
	// one more turn, or the heartbeat after them.
	for _, drop := range drops {
		drop()
	}
	hubtest.Send(t, h, id, "steps 3")
	waitStreams(t, h, "no reader once the streams are gone", func(feeds, streams int) bool { return feeds == 0 && streams == 0 })
}

// A stream that resumes from Last-Event-ID 0 on a long workspace reads its pages at the
// key's pace: with a burst of one page and r pages a second, n pages take at least
// (n-1)/r. It still gets every event once, in order.
func TestAStreamResumingFromZeroIsPaced(t *testing.T) {
	t.Parallel()
	const rate = 4.0
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { c.StreamPageRate, c.StreamPageBurst = rate, 1 }))
	id := hubtest.CreateOn(t, h, "local", "steps 600")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	hubtest.Send(t, h, id, "steps 600")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(2))
	stored := seqsOf(allEvents(t, h, id))
	pages := (len(stored) + 499) / 500 // then the stream is at the reader's place: no more pages
	if pages < 4 {
		t.Fatalf("expected at least 4 pages of events, got %d events", len(stored))
	}
	before := h.Service.Admin.EventStreamStats()

	start := time.Now()
	events, drop := hubtest.Stream(t, h, id, "0")
	defer drop()
	var got []int64
	for len(got) < len(stored) {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended after %d of %d events", len(got), len(stored))
			}
			got = append(got, e.Seq)
		case <-time.After(30 * time.Second):
			t.Fatalf("expected %d events within 30 s, got %d", len(stored), len(got))
		}
	}
	took := time.Since(start)
	if !slices.Equal(got, stored) {
		t.Fatalf("expected every stored event once, in order; got %d events, %v...", len(got), got[:min(len(got), 10)])
	}
	least := time.Duration(float64(pages-1) / rate * float64(time.Second))
	if took < least {
		t.Fatalf("expected %d pages at %.0f a second to take at least %s, took %s", pages, rate, least, took)
	}
	if reads := h.Service.Admin.EventStreamStats().PageReads - before.PageReads; reads != int64(pages) {
		t.Fatalf("expected %d pages read by the stream, got %d", pages, reads)
	}
	t.Logf("%d pages in %s (at least %s)", pages, took, least)
}
