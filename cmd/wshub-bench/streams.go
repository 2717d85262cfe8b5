package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// B8: account A holds 1,000 event streams open on one workspace while it gets 10 turn
// events a second (each its own transaction and NOTIFY, the worst case for readers);
// account B lists its workspaces meanwhile. Its p50 is compared with its own, measured
// on the same hub just before, and the hub's memory is read from /proc and /metrics.
const (
	b8Streams   = 1000
	b8Keys      = 50 // of account A: 20 streams each, the default WSHUB_MAX_STREAMS_PER_KEY
	b8PerSecond = 10
	b8BSpaces   = 50 // account B's workspaces
	// The bounds B8 is held to: B's p50 at most twice its own without the streams, and
	// the hub's resident memory with the streams at most b8MemoryMiB.
	b8SlowdownBound = 2.0
	b8MemoryMiB     = 150
)

// streamFigures are B8's.
type streamFigures struct {
	ran                         time.Time
	dur                         time.Duration
	baseline, loaded            result
	inserted                    int64
	delivered, expected, wrong  int64
	reconnects, failedOpens     int64
	lag                         []time.Duration
	rssIdle, rssOpen, rssEvents int // KiB
	heapIdle, heapEvents        float64
	// spellings are the second part's: one key's streams, its header spelt many ways.
	spellings spellingFigures
}

// streamTenants makes B8's tenants: keys of account A for its streams, and account B
// with a project, workspaces and a key.
func (r *run) streamTenants(ctx context.Context, store *postgres.Store, h *hub.Hub, a *core.Account) error {
	keys := b8Keys + 1 // and the account's own
	if _, err := h.Service.Admin.UpdateAccount(ctx, a.ID, core.AccountUpdate{MaxKeys: &keys}); err != nil {
		return err
	}
	for i := range b8Keys {
		_, key, err := h.Service.Admin.CreateAPIKey(ctx, a.ID, fmt.Sprintf("stream %d", i))
		if err != nil {
			return err
		}
		r.streamKeys = append(r.streamKeys, key)
	}
	b := &core.Account{Name: "bench B", Entitled: true}
	if err := h.Service.Admin.CreateAccount(ctx, b); err != nil {
		return err
	}
	var err error
	if _, r.keyB, err = h.Service.Admin.CreateAPIKey(ctx, b.ID, "bench B"); err != nil {
		return err
	}
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: b.ID, Repository: filepath.Join(r.dataDir, "repo")})
	if err != nil {
		return err
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil {
		return err
	}
	return seedWorkspaces(ctx, store.DB().DB, b.ID, p.ID, "ws_benchb", b8BSpaces)
}

// streamFollower is one stream of B8's client: it reads events and resumes with
// Last-Event-ID when the hub ends the stream.
type streamFollower struct {
	key                            string
	opened                         chan struct{}
	last                           atomic.Int64
	got, wrong, reconnects, failed int64
	lag                            []time.Duration
}

func (r *run) eventStreams(ctx context.Context) error {
	f := &r.streamFigures
	f.ran, f.dur = time.Now(), r.dur
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	metricsAddr := ln.Addr().String()
	ln.Close()
	// The account's ceiling raised to the streams measured: B8 is the hub's cost of
	// many streams, which an operator may allow an account.
	srv, err := r.serve(ctx, "WSHUB_METRICS_ADDR="+metricsAddr, fmt.Sprintf("WSHUB_MAX_STREAMS_PER_ACCOUNT=%d", b8Streams))
	if err != nil {
		return err
	}
	defer srv.stop()
	time.Sleep(2 * time.Second)
	f.rssIdle, f.heapIdle = srv.memory("").kib, heapInuse(metricsAddr)
	listB := func(int) request { return request{method: "GET", path: "/v1/api/workspaces", key: r.keyB} }
	f.baseline = r.load(ctx, srv.url, fmt.Sprintf("B8 account B lists its %d workspaces, 1 client", b8BSpaces), 1, listB)

	ws := r.wsIDs[0]
	sctx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: b8Streams, DisableCompression: true}}
	sent := make([]atomic.Int64, 1<<16) // by seq: when the event's insert began (Unix ns)
	followers := make([]*streamFollower, b8Streams)
	var wg sync.WaitGroup
	for i := range followers {
		fl := &streamFollower{key: r.streamKeys[i%len(r.streamKeys)], opened: make(chan struct{})}
		followers[i] = fl
		wg.Add(1)
		go func() { defer wg.Done(); fl.follow(sctx, hc, srv.url, ws, sent) }()
		if i%50 == 49 { // in steps, as clients come: the listener's backlog is not the test
			for _, o := range followers[i-49 : i+1] {
				select {
				case <-o.opened:
				case <-time.After(30 * time.Second):
					return fmt.Errorf("stream %d did not open within 30 s", i)
				}
			}
		}
	}
	f.rssOpen = srv.memory("").kib

	store, err := postgres.Open(ctx, r.dbURL, postgres.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	sealer, err := seal.FromBase64(r.contentKey)
	if err != nil {
		return err
	}
	ectx, stopEvents := context.WithCancel(ctx)
	inserted := make(chan error, 1)
	go func() { inserted <- r.insertEvents(ectx, store, sealer, ws, sent, &f.inserted) }()
	time.Sleep(2 * time.Second) // the streams in their steady state
	f.loaded = r.load(ctx, srv.url, fmt.Sprintf("B8 the same, beside %d streams and %d events/s", b8Streams, b8PerSecond), 1, listB)
	f.rssEvents, f.heapEvents = srv.memory("").kib, heapInuse(metricsAddr)
	stopEvents()
	if err := <-inserted; err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	last := atomic.LoadInt64(&f.inserted)
	deadline := time.Now().Add(30 * time.Second)
	for _, fl := range followers {
		for fl.last.Load() < last && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	stopStreams()
	wg.Wait()
	f.expected = int64(len(followers)) * last
	for _, fl := range followers {
		f.delivered += fl.got
		f.wrong += fl.wrong
		f.reconnects += fl.reconnects
		f.failedOpens += fl.failed
		f.lag = append(f.lag, fl.lag...)
	}
	srv.stop()
	slices.Sort(f.lag)
	fmt.Printf("B8 %d streams: %d of %d events delivered, %d out of order or repeated; lag p50 %.1f ms, p99 %.1f ms; RSS %.1f / %.1f / %.1f MiB\n",
		len(followers), f.delivered, f.expected, f.wrong, ms(pct(f.lag, 50)), ms(pct(f.lag, 99)),
		float64(f.rssIdle)/1024, float64(f.rssOpen)/1024, float64(f.rssEvents)/1024)
	return r.spelledStreams(ctx)
}

// insertEvents writes one turn event b8PerSecond times a second, each in its own
// transaction with its NOTIFY, as a turn's recorder does, until ctx ends; n counts them.
func (r *run) insertEvents(ctx context.Context, store *postgres.Store, sealer *seal.AESGCM, ws string, sent []atomic.Int64, n *int64) error {
	const turn = "turn_bench"
	t := time.NewTicker(time.Second / b8PerSecond)
	defer t.Stop()
	for seq := int64(1); ; seq++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		body, err := sealer.Seal([]byte(fmt.Sprintf(`{"tool":"bash","summary":"step %d"}`, seq)), "turn-event:"+ws+":"+turn)
		if err != nil {
			return err
		}
		sent[seq].Store(time.Now().UnixNano()) // the bench is the workspace's only writer: seq is known
		e := &core.StoredTurnEvent{WorkspaceID: ws, TurnID: turn, Type: core.EventToolStarted, SealedBody: body, CreatedAt: time.Now()}
		if err := store.InTx(context.WithoutCancel(ctx), func(q core.Queries) error {
			if err := q.InsertTurnEvents(ctx, []*core.StoredTurnEvent{e}); err != nil {
				return err
			}
			return q.Notify(ctx, core.EventsChannel, ws)
		}); err != nil {
			return err
		}
		if e.Seq != seq {
			return fmt.Errorf("expected event %d, the store numbered it %d", seq, e.Seq)
		}
		atomic.StoreInt64(n, seq)
	}
}

func (fl *streamFollower) follow(ctx context.Context, hc *http.Client, base, ws string, sent []atomic.Int64) {
	var once sync.Once
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/api/workspaces/"+ws+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+fl.key)
		req.Header.Set("Accept", "text/event-stream")
		if last := fl.last.Load(); last > 0 {
			req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
		}
		resp, err := hc.Do(req)
		if err == nil && resp.StatusCode != http.StatusOK {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if err != nil {
			if ctx.Err() == nil {
				fl.failed++
				time.Sleep(time.Second)
			}
			continue
		}
		once.Do(func() { close(fl.opened) })
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			v, ok := strings.CutPrefix(sc.Text(), "id: ")
			if !ok {
				continue
			}
			seq, _ := strconv.ParseInt(v, 10, 64)
			if at := sent[seq%int64(len(sent))].Load(); at > 0 {
				fl.lag = append(fl.lag, time.Duration(time.Now().UnixNano()-at))
			}
			fl.got++
			if seq != fl.last.Load()+1 {
				fl.wrong++
			}
			fl.last.Store(max(seq, fl.last.Load()))
		}
		resp.Body.Close()
		fl.reconnects++
	}
}

// heapInuse is the hub's go_memstats_heap_inuse_bytes, from its metrics listener.
func heapInuse(addr string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// markdown writes B8's section, between markers so that `-only B8` can replace it.
func (f *streamFigures) markdown(b *strings.Builder) {
	if f.ran.IsZero() {
		return
	}
	b.WriteString(b8Begin + "\n")
	fmt.Fprintf(b, "Event streams (B8), run %s on %s, %d CPUs, %s: %d streams open on one workspace of account A (%d keys, %d streams each: ",
		f.ran.UTC().Format("2006-01-02 15:04 UTC"), cpuModel(), runtime.NumCPU(), runtime.Version(), b8Streams, b8Keys, b8Streams/b8Keys)
	fmt.Fprintf(b, "the default `WSHUB_MAX_STREAMS_PER_KEY`; `WSHUB_MAX_STREAMS_PER_ACCOUNT` raised to %d), which gets ", b8Streams)
	fmt.Fprintf(b, "%d turn events a second, each its own transaction and ", b8PerSecond)
	fmt.Fprintf(b, "NOTIFY; meanwhile account B lists its %d workspaces from one client, %s a measurement. Bounds: B's p50 at most ", b8BSpaces, f.dur)
	fmt.Fprintf(b, "%.0f× its own without the streams, the hub's resident memory at most %d MiB.\n\n", b8SlowdownBound, b8MemoryMiB)
	b.WriteString("| measurement | figure |\n|---|---|\n")
	ratio := 0.0
	if f.baseline.p50 > 0 {
		ratio = float64(f.loaded.p50) / float64(f.baseline.p50)
	}
	fmt.Fprintf(b, "| B8 account B, GET /workspaces, no streams | p50 %.2f ms, p99 %.2f ms, %.0f req/s |\n",
		ms(f.baseline.p50), ms(f.baseline.p99), f.baseline.perSec)
	fmt.Fprintf(b, "| B8 the same, beside the %d streams and %d events/s | p50 %.2f ms, p99 %.2f ms, %.0f req/s: p50 %.2f× (%s) |\n",
		b8Streams, b8PerSecond, ms(f.loaded.p50), ms(f.loaded.p99), f.loaded.perSec, ratio, holds(ratio <= b8SlowdownBound))
	fmt.Fprintf(b, "| B8 events delivered | %d of %d (%d events × %d streams), %d out of order or repeated; %d streams resumed with Last-Event-ID, %d opens failed |\n",
		f.delivered, f.expected, f.inserted, b8Streams, f.wrong, f.reconnects-b8Streams, f.failedOpens)
	fmt.Fprintf(b, "| B8 lag, event insert begun → received by a stream | p50 %.1f ms, p99 %.1f ms |\n", ms(pct(f.lag, 50)), ms(pct(f.lag, 99)))
	mib := func(kib int) float64 { return float64(kib) / 1024 }
	fmt.Fprintf(b, "| B8 hub resident memory: idle, %d streams open, with the events | %.1f MiB, %.1f MiB, %.1f MiB (%s); %.1f KiB a stream |\n",
		b8Streams, mib(f.rssIdle), mib(f.rssOpen), mib(f.rssEvents), holds(mib(f.rssEvents) <= b8MemoryMiB),
		float64(f.rssEvents-f.rssIdle)/b8Streams)
	fmt.Fprintf(b, "| B8 hub heap in use: idle, with the streams and events | %.1f MiB, %.1f MiB |\n", f.heapIdle/(1<<20), f.heapEvents/(1<<20))
	f.spellings.markdown(b)
	b.WriteString("\n" + b8End + "\n")
}

const (
	b8Begin = "<!-- B8: written by make bench; `go run ./cmd/wshub-bench -only B8` rewrites this part alone -->"
	b8End   = "<!-- end of B8 -->"
)

func holds(ok bool) string {
	if ok {
		return "within the bound"
	}
	return "**over the bound**"
}

// splice replaces the section between begin and end of an existing report (or appends it).
func splice(report, begin, end, section string) string {
	i, j := strings.Index(report, begin), strings.Index(report, end)
	if strings.TrimSpace(report) == "" {
		return section
	}
	if i < 0 || j < i {
		return strings.TrimRight(report, "\n") + "\n\n" + section
	}
	return report[:i] + section + strings.TrimLeft(report[j+len(end):], "\n")
}
