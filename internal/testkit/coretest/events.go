package coretest

import (
	"context"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// eventWait bounds a wait for a turn event: the event comes in milliseconds, and a
// test that waits longer has found a turn that never sends it.
const eventWait = 10 * time.Second

// Events are a workspace's turn events as its stream (core's own, woken by NOTIFY)
// delivers them: a test waits for the event itself.
type Events struct {
	t      testing.TB
	stream *core.EventStream
	seen   []*core.TurnEvent
}

// Events opens the stream of acct's workspace from its first event; it is closed
// when t ends.
func (c *Core) Events(acct *core.Account, workspaceID string) *Events {
	c.t.Helper()
	st, err := c.Workspaces.StreamEvents(context.Background(), acct, workspaceID, 0, nil)
	if err != nil {
		c.t.Fatalf("stream events: %v", err)
	}
	c.t.Cleanup(st.Close)
	return &Events{t: c.t, stream: st}
}

// Next returns the next event of type typ, and the events before it since the last
// call; the test fails when none comes within eventWait.
func (e *Events) Next(typ core.TurnEventType) (*core.TurnEvent, []*core.TurnEvent) {
	e.t.Helper()
	var before []*core.TurnEvent
	timeout := time.NewTimer(eventWait)
	defer timeout.Stop()
	for {
		for len(e.seen) > 0 {
			ev := e.seen[0]
			e.seen = e.seen[1:]
			if ev.Type == typ {
				return ev, before
			}
			before = append(before, ev)
		}
		got, err := e.stream.Next(context.Background())
		if err != nil {
			e.t.Fatalf("read events: %v", err)
		}
		if len(got) > 0 {
			e.seen = got
			continue
		}
		select {
		case <-e.stream.Wake():
		case <-timeout.C:
			e.t.Fatalf("no %s event within %s; saw %v", typ, eventWait, types(before))
		}
	}
}

func types(events []*core.TurnEvent) []core.TurnEventType {
	out := make([]core.TurnEventType, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}
