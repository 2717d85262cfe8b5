package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/balancer"
)

// The soak (make soak): steady load on a real `wshub serve` (creates, sends, turns,
// webhook deliveries to a receiver that fails a third of its attempts, Slack events),
// while the hub is SIGKILLed several times and PostgreSQL restarted once; then SQL
// checks that nothing was lost or duplicated, and a bounded run of random and malformed
// requests against every endpoint.

const (
	soakTeam    = "TSOAK001"
	soakChannel = "CSOAK001"
	soakBot     = "USOAKBOT"
	soakSecret  = "soak-signing-secret"
	// soakAgent answers at once, or after a second for a prompt that says "slow", so
	// kills land in the middle of turns.
	soakAgent = `p=$(cat); case "$p" in *slow*) sleep 1 ;; esac; echo "done: $p"`
)

// soak is one soak run: what was sent, what was accepted, and what went wrong.
type soak struct {
	r         *run
	dur       time.Duration
	kills     int
	pgRestart string // the command that stops (arg "stop") and starts PostgreSQL; "" skips it
	url       string // where clients send requests: the hub, or the balancer in front of the hubs
	hc        *http.Client
	hubs      []*soakHub
	lb        *balancer.Balancer // nil with one hub
	command   string             // the command line, for the report
	leftover  int                // runtime processes still running at the end, killed

	mu        sync.Mutex
	windows   [][2]time.Time // restarts: from the kill to the hub answering again (+ grace)
	inWindow  bool
	bad       []string // 5xx or refused connections outside the windows
	tolerated int      // the same inside them
	anomalies []string
	apiWS     map[string]int // workspace -> user messages accepted (its prompt and sends)
	wsList    []string
	threads   map[string]int // Slack thread ts -> events accepted in it
	threadTS  []string
	events    int
	requests  int

	ok, flaky *soakReceiver
	slack     *slacktest.Server
	posts     int
	checks    []check
	turns     map[string]int64 // recorded turns by outcome
	fuzz      fuzzReport
}

type check struct {
	name   string
	failed int64 // rows (or items) that break it
	detail string
}

// soakReceiver acknowledges deliveries; a flaky one answers 500 to about a third of
// attempts (never a third time for one event, so each is delivered within the first
// two retries of api.md's schedule: 30 s and 60 s).
type soakReceiver struct {
	flaky bool
	srv   *http.Server
	url   string
	mu    sync.Mutex
	seen  map[string]int // event id -> attempts that reached it
	acked map[string]bool
	fails int
}

func newSoakReceiver(flaky bool) (*soakReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &soakReceiver{flaky: flaky, seen: map[string]int{}, acked: map[string]bool{}, url: "http://" + ln.Addr().String() + "/hook"}
	rc.srv = &http.Server{Handler: rc, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() { _ = rc.srv.Serve(ln) }()
	return rc, nil
}

func (rc *soakReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	id := r.Header.Get("service-event-id")
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seen[id]++
	if rc.flaky && rc.seen[id] < 3 && rand.IntN(3) == 0 {
		rc.fails++
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rc.acked[id] = true
	w.WriteHeader(http.StatusOK)
}

// runSoak is make soak: it returns an error when a check failed.
func (r *run) runSoak(ctx context.Context, dur time.Duration, kills, hubs int, pgRestart string) (*soak, error) {
	store, h, acct, err := r.tenant(ctx)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	defer r.teardown()
	err = h.Service.Admin.BindChat(ctx, &core.ChatBinding{Platform: core.PlatformSlack, TeamID: soakTeam, AccountID: acct.ID,
		ProjectID: r.tinyProject, Agent: "agent_1", Model: "soak"})
	store.Close()
	if err != nil {
		return nil, err
	}
	s := &soak{r: r, dur: dur, kills: kills, pgRestart: pgRestart, apiWS: map[string]int{}, threads: map[string]int{},
		hc: clientFor(32)}
	if s.ok, err = newSoakReceiver(false); err != nil {
		return nil, err
	}
	defer s.ok.srv.Close()
	if s.flaky, err = newSoakReceiver(true); err != nil {
		return nil, err
	}
	defer s.flaky.srv.Close()
	s.slack = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/auth.test", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `{"ok":true,"user_id":%q,"team_id":%q,"user":"wshub"}`, soakBot, soakTeam)
		})
		c.Handle("/chat.postMessage", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			s.mu.Lock()
			s.posts++
			s.mu.Unlock()
			fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":"%d.000001"}`, r.Form.Get("channel"), time.Now().UnixNano())
		})
		c.Handle("/reactions.add", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	})
	s.slack.Start()
	defer s.slack.Stop()

	env := []string{"WSHUB_API_RATE=0", "WSHUB_MAX_ACTIVE_WORKSPACES=8", "WSHUB_AGENT_1_COMMAND=" + soakAgent,
		"WSHUB_WEBHOOK_ALLOW_INSECURE=true", "WSHUB_WEBHOOK_CONCURRENCY=16", "WSHUB_LEASE_FOR=5s",
		"WSHUB_WEBHOOK_LEASE_FOR=15s", "WSHUB_SWEEP_EVERY=5s", "WSHUB_WORKER_POLL=1s",
		"WSHUB_SLACK_BOT_TOKEN=xoxb-soak", "WSHUB_SLACK_SIGNING_SECRET=" + soakSecret, "WSHUB_SLACK_API_URL=" + s.slack.GetAPIURL()}
	if hubs == 1 {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		s.url = "http://" + addr
		s.hubs = []*soakHub{{url: s.url, env: append([]string{"WSHUB_ADDR=" + addr}, env...)}}
	} else if err := s.replicas(hubs, env); err != nil {
		return nil, err
	}
	defer s.stopHubs()
	for _, h := range s.hubs {
		if h.srv, err = r.serve(ctx, h.env...); err != nil {
			return nil, err
		}
	}
	for _, rc := range []*soakReceiver{s.ok, s.flaky} {
		st, body := s.call(ctx, "POST", "/v1/api/webhooks", map[string]any{"url": rc.url}, "")
		if st != http.StatusCreated {
			return nil, fmt.Errorf("create webhook: %d %s", st, body)
		}
	}

	fmt.Printf("soak: %s of load, %d hub kills, PostgreSQL restart: %v\n", dur, kills, pgRestart != "")
	if hubs > 1 {
		fmt.Printf("soak: %d hubs with no shared disk behind %s: %s\n", hubs, s.lb.URL, s.hubURLs())
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	if err := s.drain(ctx); err != nil {
		s.anomalies = append(s.anomalies, "drain: "+err.Error())
	}
	if err := s.verify(ctx); err != nil {
		return nil, err
	}
	s.turns = s.outcomes(ctx) // before the database goes with teardown
	s.fuzz = s.malformed(ctx, 45*time.Second)
	r.keepDir = s.failed() > 0
	return s, nil
}

// load runs the generators for s.dur beside the chaos: kills spread over the run and
// one PostgreSQL restart in the middle.
func (s *soak) load(ctx context.Context) error {
	lctx, stop := context.WithTimeout(ctx, s.dur)
	defer stop()
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(lctx) }()
	}
	// About 11 turns a second in all (a create every 0.8 s, two senders every 0.25 s,
	// a Slack event every 0.7 s): steady load the runtime keeps up with (make bench
	// measures about 40 turns/s) even while it recovers from a kill.
	run(s.creator)
	for range 2 {
		run(s.sender)
	}
	run(s.slackEvents)
	chaosErr := make(chan error, 1)
	go func() { chaosErr <- s.chaos(lctx) }()
	wg.Wait()
	return <-chaosErr
}

// chaos kills and restarts a hub s.kills times and PostgreSQL once, evenly spaced. With
// more than one hub, the kills take the hubs in turn.
func (s *soak) chaos(ctx context.Context) error {
	steps := s.kills
	if s.pgRestart != "" {
		steps++
	}
	gap := s.dur / time.Duration(steps+1)
	pgAt := steps / 2
	killed := 0
	for i := 1; i <= steps; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(gap):
		}
		if s.pgRestart != "" && i == pgAt {
			if err := s.restartPostgres(ctx); err != nil {
				return err
			}
			continue
		}
		if err := s.killHub(ctx, s.hubs[killed%len(s.hubs)]); err != nil {
			return err
		}
		killed++
	}
	return nil
}

func (s *soak) openWindow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inWindow = true
	now := time.Now()
	s.windows = append(s.windows, [2]time.Time{now})
	return now
}

// closeWindow ends the window when each of the hubs answers /readyz again (on its own
// address, not the balancer's), plus a grace for the requests that were in flight.
func (s *soak) closeWindow(ctx context.Context, hubs ...*soakHub) {
	deadline := time.Now().Add(2 * time.Minute)
	for _, h := range hubs {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			resp, err := s.hc.Get(h.url + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(2 * time.Second)
	s.mu.Lock()
	s.inWindow = false
	s.windows[len(s.windows)-1][1] = time.Now()
	s.mu.Unlock()
}

// killHub SIGKILLs the hub and starts it again on its address and data directory.
func (s *soak) killHub(ctx context.Context, h *soakHub) error {
	s.openWindow()
	h.current().kill()
	s.mu.Lock()
	h.kills++
	s.mu.Unlock()
	if h.name == "" {
		fmt.Println("soak: hub killed")
	} else {
		fmt.Printf("soak: hub %s killed\n", h.name)
	}
	time.Sleep(500 * time.Millisecond)
	srv, err := s.r.serve(context.WithoutCancel(ctx), h.env...)
	if err != nil {
		return fmt.Errorf("restart hub %s: %w", h.name, err)
	}
	h.mu.Lock()
	h.srv = srv
	h.mu.Unlock()
	s.closeWindow(ctx, h)
	return nil
}

func (s *soak) restartPostgres(ctx context.Context) error {
	s.openWindow()
	fmt.Println("soak: restarting PostgreSQL")
	for _, step := range []string{"stop", "start"} {
		cmd := exec.CommandContext(ctx, "bash", s.pgRestart, step)
		// pg.sh start does nothing when DATABASE_URL is set: it is not, for it.
		cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "DATABASE_URL=") })
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s PostgreSQL: %w: %s", step, err, out)
		}
		time.Sleep(time.Second)
	}
	s.closeWindow(ctx, s.hubs...)
	return nil
}

// send makes one request until it is answered below 500 (retrying as a client
// should: the same Idempotency-Key, or the same Slack event), counting every 5xx and
// refused connection inside or outside the restart windows. It gives up when ctx ends.
func (s *soak) send(ctx context.Context, method, path string, body []byte, header map[string]string) (int, []byte) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), method, s.url+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if attempt > 0 && strings.HasPrefix(path, "/slack/") {
			req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(attempt))
		}
		resp, err := s.hc.Do(req)
		var status int
		var out []byte
		if err == nil {
			out, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		s.mu.Lock()
		s.requests++
		if err != nil || status >= 500 {
			if s.inWindow || s.nearWindow(time.Now()) {
				s.tolerated++
			} else {
				s.bad = append(s.bad, fmt.Sprintf("%s %s: %d %v %.200s", method, path, status, err, out))
			}
		}
		s.mu.Unlock()
		if err == nil && status < 500 {
			return status, out
		}
		if ctx.Err() != nil && attempt > 200 {
			return status, out
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// nearWindow: a request that started in a window may be answered just after it.
func (s *soak) nearWindow(t time.Time) bool {
	for _, w := range s.windows {
		if !t.Before(w[0]) && (w[1].IsZero() || t.Before(w[1].Add(time.Second))) {
			return true
		}
	}
	return false
}

// call is send for the API, with the key and a JSON body.
func (s *soak) call(ctx context.Context, method, path string, body any, idemKey string) (int, []byte) {
	b, _ := json.Marshal(body)
	h := map[string]string{"Authorization": "Bearer " + s.r.key, "Content-Type": "application/json"}
	if idemKey != "" {
		h["Idempotency-Key"] = idemKey
	}
	return s.send(ctx, method, path, b, h)
}

// creator creates a workspace with a prompt about every 800 ms.
func (s *soak) creator(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		key := fmt.Sprintf("soak-create-%d", i)
		st, out := s.call(ctx, "POST", "/v1/api/workspaces", map[string]any{"prompt": "soak create " + strconv.Itoa(i),
			"projectId": s.r.tinyProject, "agent": "agent_1", "model": "soak"}, key)
		var created struct {
			Workspace struct {
				WorkspaceID string `json:"workspaceId"`
			} `json:"workspace"`
		}
		w := &created.Workspace
		if st == http.StatusCreated && json.Unmarshal(out, &created) == nil && w.WorkspaceID != "" {
			s.mu.Lock()
			if _, dup := s.apiWS[w.WorkspaceID]; dup {
				s.anomalies = append(s.anomalies, "create "+key+" answered an existing workspace "+w.WorkspaceID)
			}
			s.apiWS[w.WorkspaceID] = 1
			s.wsList = append(s.wsList, w.WorkspaceID)
			s.mu.Unlock()
		} else if st != 0 {
			s.anomaly("create %s: %d %.200s", key, st, out)
		}
		sleepCtx(ctx, 800*time.Millisecond)
	}
}

var sendSeq struct {
	sync.Mutex
	n int
}

// sender sends messages to random workspaces created so far (one in eight slow).
func (s *soak) sender(ctx context.Context) {
	for ctx.Err() == nil {
		s.mu.Lock()
		var ws string
		if len(s.wsList) > 0 {
			ws = s.wsList[rand.IntN(len(s.wsList))]
		}
		s.mu.Unlock()
		if ws == "" {
			sleepCtx(ctx, 200*time.Millisecond)
			continue
		}
		sendSeq.Lock()
		sendSeq.n++
		n := sendSeq.n
		sendSeq.Unlock()
		text := "soak send " + strconv.Itoa(n)
		if n%8 == 0 {
			text += " slow"
		}
		key := fmt.Sprintf("soak-send-%d", n)
		st, out := s.call(ctx, "POST", "/v1/api/workspaces/"+ws+"/messages", map[string]any{"text": text}, key)
		if st == http.StatusOK {
			s.mu.Lock()
			s.apiWS[ws]++
			s.mu.Unlock()
		} else if st != 0 {
			s.anomaly("send %s to %s: %d %.200s", key, ws, st, out)
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
}

// slackEvents posts a signed mention about every 700 ms: a new thread one time in
// three, else in a thread started before.
func (s *soak) slackEvents(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		ts := fmt.Sprintf("%d.%06d", 1800000000+i, i)
		s.mu.Lock()
		thread := ""
		if len(s.threadTS) > 0 && i%3 != 0 {
			thread = s.threadTS[rand.IntN(len(s.threadTS))]
		}
		s.mu.Unlock()
		ev := map[string]any{"type": "app_mention", "user": "USOAKER1", "text": "<@" + soakBot + "> soak event " + strconv.Itoa(i),
			"ts": ts, "channel": soakChannel, "event_ts": ts}
		if thread != "" {
			ev["thread_ts"] = thread
		}
		body, _ := json.Marshal(map[string]any{"token": "unused", "team_id": soakTeam, "api_app_id": "ASOAK", "type": "event_callback",
			"event_id": "EvSoak" + strconv.Itoa(i), "event_time": time.Now().Unix(), "event": ev})
		at := strconv.FormatInt(time.Now().Unix(), 10)
		m := hmac.New(sha256.New, []byte(soakSecret))
		fmt.Fprintf(m, "v0:%s:%s", at, body)
		st, out := s.send(ctx, "POST", "/slack/events", body, map[string]string{"Content-Type": "application/json",
			"X-Slack-Request-Timestamp": at, "X-Slack-Signature": "v0=" + hex.EncodeToString(m.Sum(nil))})
		if st == http.StatusOK {
			s.mu.Lock()
			s.events++
			if thread == "" {
				s.threadTS = append(s.threadTS, ts)
				thread = ts
			}
			s.threads[thread]++
			s.mu.Unlock()
		} else if st != 0 {
			s.anomaly("slack event %d: %d %.200s", i, st, out)
		}
		sleepCtx(ctx, 700*time.Millisecond)
	}
}

func (s *soak) anomaly(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.anomalies) < 50 {
		s.anomalies = append(s.anomalies, fmt.Sprintf(format, args...))
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
