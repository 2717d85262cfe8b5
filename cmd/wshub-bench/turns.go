package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wshub/wshub/client"
	"github.com/wshub/wshub/webhook"
)

// benchAgent is the trivial command agent of the turn measurements: it reads the
// prompt and answers with its own start and end (Unix nanoseconds), so the hub's
// overhead is the turn's time in the hub less the agent's own.
const benchAgent = `s=$(date +%s%N); cat >/dev/null; echo "$s $(date +%s%N)"`

// turnFigures are the measurements of the hub with its runtime on.
type turnFigures struct {
	createToReady     []time.Duration // B7, one per create of the large repository
	createToReadyTiny []time.Duration // the 200 workspaces of B5, created together
	files             int

	serial          int
	serialTotal     []time.Duration // send accepted -> reply recorded, one turn at a time
	serialOverhead  []time.Duration // the same less the agent's own time
	noneTotal       []time.Duration // -only B5: serialTotal of a project with network none
	noneOverhead    []time.Duration
	burstTurns      int
	burstWorkspaces int
	burstTurnsPerS  float64
	drained         int
	deliveriesPerS  float64         // draining the burst's backlog
	lag             []time.Duration // turn recorded -> delivery acknowledged, serial turns
}

// receiver acknowledges webhook deliveries on loopback and records when each arrived.
type receiver struct {
	secret string
	srv    *http.Server
	url    string

	mu      sync.Mutex
	acks    map[string]time.Time // event id -> first acknowledgement
	lag     []time.Duration
	ended   time.Time // the latest turn end among the events received
	perWS   map[string]int
	changed chan struct{}
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &receiver{acks: map[string]time.Time{}, perWS: map[string]int{}, changed: make(chan struct{}, 1),
		url: "http://" + ln.Addr().String() + "/hook"}
	rc.srv = &http.Server{Handler: rc, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	now := time.Now()
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	secret := rc.secret
	rc.mu.Unlock()
	ev, err := webhook.ConstructEvent(body, r.Header.Get("service-signature"), secret)
	if err != nil {
		http.Error(w, "signature", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	if _, dup := rc.acks[ev.EventID]; !dup {
		rc.acks[ev.EventID] = now
		rc.lag = append(rc.lag, now.Sub(time.UnixMilli(ev.CreatedAt)))
		if t := time.UnixMilli(ev.CreatedAt); t.After(rc.ended) {
			rc.ended = t
		}
		rc.perWS[ev.WorkspaceID]++
	}
	rc.mu.Unlock()
	select {
	case rc.changed <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusOK)
}

// waitFor waits until ok holds of the receiver's state (checked on every delivery).
func (rc *receiver) waitFor(ctx context.Context, limit time.Duration, ok func() bool) error {
	deadline := time.After(limit)
	for {
		rc.mu.Lock()
		done := ok()
		rc.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("timed out after %s", limit)
		case <-rc.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// turns measures the hub with its runtime on: B7 create-to-ready for the large
// repository, then B5 (one workspace's turns one after another, for the overhead per
// turn, and a burst over 200 workspaces, for turns/s) with B4 (the burst's deliveries to
// a local receiver), then B1 (sends while those turns run) beside the send's baseline,
// and the hub's memory after each.
func (r *run) turns(ctx context.Context) error {
	// The seeded workspaces have no checkout: the messages B1' left in them would be
	// turns that fail, beside the turns measured. They are expired first.
	if err := r.expireOpenMessages(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	env := []string{"WSHUB_ADDR=" + addr, "WSHUB_MAX_ACTIVE_WORKSPACES=8", "WSHUB_AGENT_1_COMMAND=" + benchAgent,
		"WSHUB_WEBHOOK_ALLOW_INSECURE=true", "WSHUB_WEBHOOK_CONCURRENCY=16", "WSHUB_WORKER_POLL=1s"}
	srv, err := r.serve(ctx, env...)
	if err != nil {
		return err
	}
	defer func() { srv.stop() }()
	// restart replaces the hub on the same address, with env's settings overridden.
	restart := func(extra ...string) (*server, error) {
		srv.stop()
		next, err := r.serve(ctx, append(slices.Clone(env), extra...)...)
		if err == nil {
			srv = next
		}
		return next, err
	}
	api, err := client.New(srv.url, r.key, client.WithHTTPClient(clientFor(64)))
	if err != nil {
		return err
	}
	f := &r.turnFigures
	f.files = r.bigFiles

	// B7: one at a time, so each is the create-to-ready of one workspace.
	for range 3 * boolInt(r.only != "B5") {
		d, err := createReady(ctx, api, r.bigProject, 1)
		if err != nil {
			return fmt.Errorf("B7: %w", err)
		}
		f.createToReady = append(f.createToReady, d...)
	}
	fmt.Printf("B7 create-to-ready, %d files: %v\n", r.bigFiles, f.createToReady)

	rc, err := startReceiver()
	if err != nil {
		return err
	}
	defer rc.srv.Close()
	_, secret, err := api.CreateWebhook(ctx, rc.url, "bench")
	if err != nil {
		return fmt.Errorf("create webhook: %w", err)
	}
	rc.mu.Lock()
	rc.secret = secret
	rc.mu.Unlock()

	const workspaces = 200
	ids, tiny, err := createMany(ctx, api, r.tinyProject, workspaces)
	if err != nil {
		return fmt.Errorf("create %d workspaces: %w", workspaces, err)
	}
	f.createToReadyTiny = tiny
	fmt.Printf("created %d workspaces, create-to-ready p50 %.0f ms\n", workspaces, ms(pct(tiny, 50)))

	if err := r.serialTurns(ctx, api, rc, ids[0], f); err != nil {
		return fmt.Errorf("B5 serial: %w", err)
	}
	if r.noneProject != "" {
		none, _, err := createMany(ctx, api, r.noneProject, 1)
		if err != nil {
			return fmt.Errorf("B5 serial, network none: %w", err)
		}
		var nf turnFigures
		if err := r.serialTurns(ctx, api, rc, none[0], &nf); err != nil {
			return fmt.Errorf("B5 serial, network none: %w", err)
		}
		f.noneTotal, f.noneOverhead = nf.serialTotal, nf.serialOverhead
	}
	if err := r.burst(ctx, api, rc, ids, f, restart); err != nil {
		return fmt.Errorf("B5 burst: %w", err)
	}
	if r.only == "B5" {
		return nil
	}

	// B1: sends while turns run (each send makes one), to the burst's workspaces; the
	// baseline's replayed sends go to the same workspaces, so they make turns too.
	sendScript := ""
	if stmts := r.captured["send-message"]; len(stmts) > 0 {
		quoted := make([]string, 32)
		for i := range quoted {
			quoted[i] = "'" + ids[i] + "'"
		}
		script := sendReplayTo(r.wsIDs[1], "((ARRAY["+strings.Join(quoted, ", ")+"])[:client_id + 1])")(stmts)
		sendScript = filepath.Join(r.dataDir, "send-message-turns.sql")
		if err := os.WriteFile(sendScript, []byte(script), 0o644); err != nil {
			return err
		}
	}
	for _, c := range []int{1, 8, 32} {
		res := r.load(ctx, srv.url, fmt.Sprintf("B1 send message, turns running, %d clients", c), c, func(i int) request {
			return request{method: "POST", path: "/v1/api/workspaces/" + ids[i] + "/messages", body: `{"text":"bench"}`}
		})
		if sendScript != "" {
			res.baseline = r.pgbench(ctx, sendScript, c)
		}
		r.results = append(r.results, res)
	}
	r.rss = append(r.rss, srv.memory("after B1 (runtime on)"))
	return nil
}

func (r *run) expireOpenMessages(ctx context.Context) error {
	db, err := sql.Open("postgres", r.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE messages SET status = 'expired' WHERE role = 'user' AND status IN ('pending', 'delivered')`)
	return err
}

// serialTurns sends one workspace n messages, each after the previous reply's
// delivery arrived, and reads each turn's time in the hub from the conversation:
// from the message's acceptance to its reply's, less the agent's own start-to-end.
func (r *run) serialTurns(ctx context.Context, api *client.Client, rc *receiver, ws string, f *turnFigures) error {
	const n = 200
	for i := range n {
		if _, err := api.SendMessage(ctx, ws, client.SendMessageRequest{Text: "serial " + strconv.Itoa(i)}); err != nil {
			return err
		}
		if err := rc.waitFor(ctx, time.Minute, func() bool { return rc.perWS[ws] >= i+1 }); err != nil {
			return err
		}
	}
	var msgs []client.Message
	for m, err := range api.Messages(ctx, ws, 0) {
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	sent := map[string]time.Time{}
	for _, m := range msgs {
		if m.Role == "user" {
			sent[m.TurnID] = m.CreatedAt.Time()
		}
	}
	for _, m := range msgs {
		at, ok := sent[m.TurnID]
		if m.Role != "assistant" || !ok {
			continue
		}
		total := m.CreatedAt.Time().Sub(at)
		var start, end int64
		if _, err := fmt.Sscanf(m.Text, "%d %d", &start, &end); err != nil {
			return fmt.Errorf("agent reply %q: %w", m.Text, err)
		}
		f.serialTotal = append(f.serialTotal, total)
		f.serialOverhead = append(f.serialOverhead, total-time.Duration(end-start))
	}
	f.serial = len(f.serialTotal)
	rc.mu.Lock()
	f.lag = slices.Clone(rc.lag) // the serial turns' deliveries: the pipeline keeping pace
	rc.mu.Unlock()
	fmt.Printf("B5 serial: %d turns, p50 %.1f ms, overhead p50 %.1f ms\n", f.serial, ms(pct(f.serialTotal, 50)), ms(pct(f.serialOverhead, 50)))
	return nil
}

// burst measures the two halves of the pipeline apart, each at its own pace: turns,
// with webhook delivery off (a hub with WSHUB_WEBHOOK_CONCURRENCY=0), 25 messages to
// each workspace from 32 clients, from the first send to the last turn recorded; then
// deliveries, by a hub with delivery on draining the 5,000 deliveries those turns
// queued, from its start to the last acknowledgement. (With both on, deliveries keep
// pace with turns and their rate is the turns' rate; the lag of that steady state is
// the serial phase's.)
func (r *run) burst(ctx context.Context, api *client.Client, rc *receiver, ids []string, f *turnFigures, restart func(...string) (*server, error)) error {
	perWS := 25
	if r.pin {
		perWS = 5 // the hub and its agents on one core: a fifth of the turns, in the same 5 minutes' bound
	}
	srv, err := restart("WSHUB_WEBHOOK_CONCURRENCY=0")
	if err != nil {
		return err
	}
	total := perWS * len(ids)
	start := time.Now()
	jobs := make(chan string)
	errs := make(chan error, 32)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ws := range jobs {
				if _, err := api.SendMessage(ctx, ws, client.SendMessageRequest{Text: "burst"}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for range perWS {
		for _, ws := range ids {
			jobs <- ws
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	db, err := sql.Open("postgres", r.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var ended time.Time
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*), COALESCE(max(created_at), now()) FROM messages
			WHERE role = 'assistant' AND created_at >= $1`, start).Scan(&n, &ended); err != nil {
			return err
		}
		if n >= total {
			break
		}
		if time.Now().After(deadline) {
			// Slower than the bound allows: the rate is of the turns recorded, the rest
			// are expired so that they do not run under the measurements after this one,
			// and the report says so.
			r.notes = append(r.notes, fmt.Sprintf("B5 burst: %d of its %d turns were recorded within its 5 minutes; "+
				"its rate is of those, the rest were expired, and B4's drain is of the deliveries of those recorded.", n, total))
			if err := r.expireOpenMessages(ctx); err != nil {
				return err
			}
			total = n
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	f.burstTurns, f.burstWorkspaces = total, len(ids)
	f.burstTurnsPerS = float64(total) / ended.Sub(start).Seconds()
	r.rss = append(r.rss, srv.memory("after B5 (runtime on)"))

	rc.mu.Lock()
	before := len(rc.acks)
	rc.mu.Unlock()
	if _, err := restart(); err != nil { // delivery on: the backlog drains
		return err
	}
	drainFrom := time.Now()
	if err := rc.waitFor(ctx, 4*time.Minute, func() bool { return len(rc.acks) >= before+total }); err != nil {
		return err
	}
	rc.mu.Lock()
	var lastAck time.Time
	for _, at := range rc.acks {
		lastAck = later(lastAck, at)
	}
	rc.mu.Unlock()
	f.drained = total
	f.deliveriesPerS = float64(total) / lastAck.Sub(drainFrom).Seconds()
	fmt.Printf("B5 burst: %d turns over %d workspaces, %.0f turns/s; B4 drain: %.0f deliveries/s\n",
		total, len(ids), f.burstTurnsPerS, f.deliveriesPerS)
	return nil
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// createReady creates n workspaces of the project one after another and returns each
// one's time from create to ready.
func createReady(ctx context.Context, api *client.Client, project string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		start := time.Now()
		w, err := api.CreateWorkspace(ctx, client.CreateWorkspaceRequest{ProjectID: project, Agent: "agent_1"})
		if err != nil {
			return nil, err
		}
		if err := waitReady(ctx, api, w.WorkspaceID); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// createMany creates n workspaces from 16 clients and waits until all are ready.
func createMany(ctx context.Context, api *client.Client, project string, n int) ([]string, []time.Duration, error) {
	ids := make([]string, n)
	took := make([]time.Duration, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			w, err := api.CreateWorkspace(ctx, client.CreateWorkspaceRequest{ProjectID: project, Agent: "agent_1"})
			if err == nil {
				ids[i] = w.WorkspaceID
				err = waitReady(ctx, api, w.WorkspaceID)
			}
			took[i], errs[i] = time.Since(start), err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return ids, took, nil
}

func waitReady(ctx context.Context, api *client.Client, id string) error {
	deadline := time.Now().Add(3 * time.Minute)
	state := ""
	for time.Now().Before(deadline) {
		w, err := api.GetWorkspace(ctx, id)
		if err != nil {
			return err
		}
		switch w.State {
		case "ready":
			return nil
		case "failed":
			return fmt.Errorf("workspace %s failed: %s: %s", id, w.StatusCode, w.StatusDetail)
		}
		state = w.State + " (" + w.StatusCode + ")"
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("workspace %s not ready after 3 minutes: it is %s", id, state)
}

// pct is the p-th percentile of ds (unsorted; 0 when empty).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// bigRepoStream is a git fast-import stream of one commit holding n small files.
func bigRepoStream(w io.Writer, n int) error {
	var b strings.Builder
	for i := range n {
		content := fmt.Sprintf("package p%d\n\n// File %d of the benchmark repository.\nconst N = %d\n", i/500, i, i)
		fmt.Fprintf(&b, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(content), content)
		if b.Len() > 1<<20 {
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	msg := "many files\n"
	fmt.Fprintf(&b, "commit refs/heads/main\ncommitter b <b@example.com> 1700000000 +0000\ndata %d\n%s", len(msg), msg)
	for i := range n {
		fmt.Fprintf(&b, "M 100644 :%d dir%03d/file%05d.go\n", i+1, i/500, i)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
