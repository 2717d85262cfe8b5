package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

type request struct {
	method, path, body string
	// key is the API key sent ("": the run's).
	key string
	// replay turns the captured statements into a pgbench script (nil: as captured).
	replay func(stmts []string) string
}

// result is one measurement: the hub's figures and, when there is one, PostgreSQL's
// for the same statements at the same concurrency.
type result struct {
	name     string
	clients  int
	requests int
	errors   int
	perSec   float64
	p50, p99 time.Duration
	bytes    int
	// cpu is the hub process's CPU time over the measurement (0: unknown).
	cpu      time.Duration
	baseline *baseline
}

// baseline is pgbench replaying a request's statements: with the simple protocol, each
// parsed and planned on every run (what the targets were set against), and prepared once
// per connection, as the hub runs the statements of its hot paths.
type baseline struct {
	tps     float64
	latency time.Duration // pgbench's average
	err     string
	// preparedTPS is the same script's rate with -M prepared (0: failed, see
	// preparedErr).
	preparedTPS float64
	preparedErr string
}

// load runs clients keep-alive clients for r.dur, each sending next(i) in a loop.
func (r *run) load(ctx context.Context, base, name string, clients int, next func(client int) request) result {
	// One connection per client, as keep-alive clients hold them.
	conns := make([]*rawConn, clients)
	for i := range conns {
		c, err := newRawConn(base)
		if err != nil {
			panic(err) // the bench's own URL
		}
		defer c.close()
		conns[i] = c
		// Warm up: connections open, caches filled.
		_, _, _ = c.do(ctx, r.key, next(i))
	}
	var mu sync.Mutex
	var lat []time.Duration
	res := result{name: name, clients: clients}
	pid := r.pids[base]
	cpu0 := cpuTime(pid)
	deadline := time.Now().Add(r.dur)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			errs, size := 0, 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				start := time.Now()
				n, ok, _ := conns[i].do(ctx, r.key, next(i))
				mine = append(mine, time.Since(start))
				if !ok {
					errs++
				}
				size = n
			}
			mu.Lock()
			lat = append(lat, mine...)
			res.errors += errs
			res.bytes = size
			mu.Unlock()
		}()
	}
	wg.Wait()
	if pid != 0 {
		res.cpu = cpuTime(pid) - cpu0
	}
	res.requests = len(lat)
	res.perSec = float64(len(lat)) / r.dur.Seconds()
	if len(lat) > 0 {
		slices.Sort(lat)
		res.p50 = lat[len(lat)/2]
		res.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	fmt.Printf("%-45s %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  %d errors\n", name, res.perSec,
		ms(res.p50), ms(res.p99), res.errors)
	return res
}

func do(ctx context.Context, hc *http.Client, base, key string, q request) (int, bool, error) {
	var body io.Reader
	if q.body != "" {
		body = strings.NewReader(q.body)
	}
	req, err := http.NewRequestWithContext(ctx, q.method, base+q.path, body)
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Authorization", "Bearer "+cmp.Or(q.key, key))
	if q.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, false, err
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return int(n), resp.StatusCode < 300, nil
}

// clientFor is a keep-alive client for n concurrent requests.
func clientFor(n int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 30 * time.Second}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func splitLines(s string) []string { return strings.Split(s, "\n") }
