// Package sse writes a workspace's turn events as a text/event-stream, for the API's
// and the app's event streams alike, and counts the streams each caller holds open.
package sse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// Heartbeat keeps idle streams (and the proxies on their way) open.
const Heartbeat = 15 * time.Second

// Options shape one stream.
type Options struct {
	// Lifetime ends the stream: a server bounds a whole response by its write timeout,
	// so the stream ends before it and the client resumes with Last-Event-ID
	// (EventSource does so by itself).
	Lifetime time.Duration
	// Encode is an event as the stream's data line (JSON).
	Encode func(*core.TurnEvent) []byte
	// Failed is told of a read that ended the stream other than by its end or pacing.
	Failed func(error)
	// Closing ends the stream when it is done: the server shutting down, which would
	// otherwise wait for every open stream to reach its lifetime (nil: never).
	Closing context.Context
}

// Serve writes sub's events to w until the stream's lifetime ends, the client goes
// away, or a read fails; it closes sub.
func Serve(w *bufio.Writer, sub *core.EventStream, o Options) {
	defer sub.Close()
	parent := o.Closing
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, max(o.Lifetime, 5*time.Second))
	defer cancel()
	fmt.Fprintf(w, "retry: 1000\n\n")
	idle := time.NewTimer(Heartbeat)
	defer idle.Stop()
	for {
		events, err := sub.Next(ctx)
		if err != nil {
			// A page that would come after the stream's end ends it now: the client
			// resumes from where it got to.
			if ctx.Err() == nil && !errors.Is(err, core.ErrStreamPaced) && o.Failed != nil {
				o.Failed(err)
			}
			return
		}
		for _, e := range events {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, o.Encode(e))
		}
		if err := w.Flush(); err != nil {
			return // the client went away
		}
		if len(events) > 0 {
			idle.Reset(Heartbeat)
			continue
		}
		select {
		case <-sub.Wake():
		case <-idle.C:
			fmt.Fprintf(w, ": heartbeat\n\n")
			idle.Reset(Heartbeat)
		case <-ctx.Done():
			return
		}
	}
}

// Places counts each caller's open streams on this replica (an API key's, an app
// member's, an account's): a stream holds a connection and a goroutine for minutes, so
// a caller may hold only so many. Callers are named by what authenticated them (a key's
// id, a member's id), never by request text, which can spell one credential many ways.
// A nil *Places has no limit.
type Places struct {
	Max  int
	mu   sync.Mutex
	open map[string]int
}

// NewPlaces allows max streams per caller (0: no limit, nil).
func NewPlaces(max int) *Places {
	if max <= 0 {
		return nil
	}
	return &Places{Max: max, open: map[string]int{}}
}

// Acquire takes a place for one more stream of the caller and returns its release;
// false when the caller holds all its places.
func (p *Places) Acquire(caller string) (func(), bool) {
	if p == nil {
		return func() {}, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open[caller] >= p.Max {
		return nil, false
	}
	p.open[caller]++
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.open[caller]--; p.open[caller] <= 0 {
				delete(p.open, caller)
			}
		})
	}, true
}

// Hold is one bound a stream counts against: the places and the caller it counts as.
type Hold struct {
	Places *Places
	Caller string
}

// AcquireAll takes a place in every hold, in order, and returns their release. When
// one is full it gives back the places already taken and returns that hold's index
// as full (-1 when all were taken), so the caller can say which bound it met.
func AcquireAll(holds ...Hold) (release func(), full int) {
	taken := make([]func(), 0, len(holds))
	releaseAll := func() {
		for _, r := range taken {
			r()
		}
	}
	for i, h := range holds {
		r, ok := h.Places.Acquire(h.Caller)
		if !ok {
			releaseAll()
			return nil, i
		}
		taken = append(taken, r)
	}
	return releaseAll, -1
}
