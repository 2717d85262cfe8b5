package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// B8's second part: one key of account A opens b8sStreams event streams, its header
// spelt a different way each time (the scheme's case, spaces around the key), each
// resuming from the workspace's first event, while account B lists its workspaces.
// Every limit is keyed by the authenticated key, so the key gets its
// WSHUB_MAX_STREAMS_PER_KEY and no more, and B's p50 stays within b8SlowdownBound of
// its own without them. The hub runs with its default stream limits.
const b8sStreams = 200

// spellingFigures are that part's.
type spellingFigures struct {
	baseline, loaded result
	opened, refused  int
	other            []string // statuses other than 200 and 429, or transport errors
}

// spelt is the i-th spelling of a key's Authorization header that authentication takes.
func spelt(key string, i int) string {
	schemes := []string{"Bearer", "bearer", "BEARER", "BeArEr", "bEaReR"}
	return schemes[i%len(schemes)] + strings.Repeat(" ", 1+i/len(schemes)%8) + key + strings.Repeat(" ", i/40)
}

func (r *run) spelledStreams(ctx context.Context) error {
	f := &r.streamFigures.spellings
	srv, err := r.serve(ctx)
	if err != nil {
		return err
	}
	defer srv.stop()
	listB := func(int) request { return request{method: "GET", path: "/v1/api/workspaces", key: r.keyB} }
	f.baseline = r.load(ctx, srv.url, fmt.Sprintf("B8 account B lists its %d workspaces, 1 client (default stream limits)", b8BSpaces), 1, listB)

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: b8sStreams, DisableCompression: true}}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for i := range b8sStreams {
		req, _ := http.NewRequestWithContext(sctx, "GET", srv.url+"/v1/api/workspaces/"+r.wsIDs[0]+"/events", nil)
		req.Header.Set("Authorization", spelt(r.streamKeys[0], i))
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", "0")
		resp, err := hc.Do(req)
		switch {
		case err != nil:
			f.other = append(f.other, err.Error())
			continue
		case resp.StatusCode == http.StatusOK:
			f.opened++
			wg.Add(1)
			go func() { defer wg.Done(); defer resp.Body.Close(); _, _ = io.Copy(io.Discard, resp.Body) }()
			continue
		case resp.StatusCode == http.StatusTooManyRequests:
			f.refused++
		default:
			f.other = append(f.other, resp.Status)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(time.Second) // the opened streams past their first pages
	f.loaded = r.load(ctx, srv.url, fmt.Sprintf("B8 the same, beside %d streams of one key, spelt %d ways", b8sStreams, b8sStreams), 1, listB)
	fmt.Printf("B8 spellings: %d of %d streams opened, %d refused 429, %d other; B p50 %.2f ms quiet, %.2f ms beside them\n",
		f.opened, b8sStreams, f.refused, len(f.other), ms(f.baseline.p50), ms(f.loaded.p50))
	return nil
}

// markdown writes the rows of B8's table for this part.
func (f *spellingFigures) markdown(b *strings.Builder) {
	if f.baseline.requests == 0 {
		return
	}
	ratio := 0.0
	if f.baseline.p50 > 0 {
		ratio = float64(f.loaded.p50) / float64(f.baseline.p50)
	}
	fmt.Fprintf(b, "| B8 one key opens %d streams from event 0, its header spelt a different way each time (default limits) | %d opened, %d refused `429`, %d otherwise |\n",
		b8sStreams, f.opened, f.refused, len(f.other))
	fmt.Fprintf(b, "| B8 account B, GET /workspaces, before and beside them | p50 %.2f ms, then %.2f ms: %.2f× (%s) |\n",
		ms(f.baseline.p50), ms(f.loaded.p50), ratio, holds(ratio <= b8SlowdownBound))
}
