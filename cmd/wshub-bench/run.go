package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"log"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// run is one benchmark run: its database, tenant and results.
type run struct {
	base, hubBin, pglog string
	dur                 time.Duration
	workspaces          int

	messages int

	dbName, dbURL, dataDir, contentKey string
	keepDir                            bool // teardown leaves dataDir (a soak whose checks failed: the logs)
	msgWS                              string
	key                                string
	streamKeys                         []string // B8: account A's keys for its streams
	keyB                               string   // B8: account B's key
	wsIDs                              []string
	tinyProject, bigProject            string
	noneProject                        string // -only B5: the project of the serial turns with network none
	envProject                         string
	bigFiles                           int

	turnFigures   turnFigures
	streamFigures streamFigures
	blobFigures   blobFigures
	envFigures    envFigures
	scaleFigures  scaleFigures
	// scaleSizes are the scale run's workspace counts, smallest first.
	scaleSizes []int
	// dbSuffix tells a database made beside the run's own (the scale run's) from it.
	dbSuffix string
	// only names the one measurement to run ("": all of them).
	only     string
	captured map[string][]string // the statements of each request captured, as sent

	results []result
	rss     []rssPoint
	notes   []string
	// pin: -pin (pin.go); pids are the hubs' processes by their URL, for their CPU time.
	pin  bool
	pids map[string]int
}

type rssPoint struct {
	when            string
	kib, anon, file int // VmRSS, RssAnon, RssFile
	// pss is the proportional set size (smaps_rollup): the binary's pages shared with
	// other processes counted by their share, what the process costs the machine.
	pss int
}

func (r *run) all(ctx context.Context) error {
	if err := r.setup(ctx); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	defer r.teardown()
	switch r.only {
	case "B8":
		return r.eventStreams(ctx)
	case "B9":
		return r.blobStores(ctx)
	case "B10":
		return r.environments(ctx)
	case "B5":
		return r.turns(ctx)
	}
	msgsPath := "/v1/api/workspaces/" + r.msgWS + "/messages?afterSeq=50000&limit=200"
	scripts, err := r.capture(ctx, map[string]request{
		"get-workspace": {method: "GET", path: "/v1/api/workspaces/" + r.wsIDs[0]},
		"list-messages": {method: "GET", path: msgsPath},
		"send-message": {method: "POST", path: "/v1/api/workspaces/" + r.wsIDs[1] + "/messages", body: `{"text":"bench"}`,
			replay: sendReplay(r.wsIDs[1], 2)},
	})
	if err != nil {
		r.notes = append(r.notes, "statement capture failed, no PostgreSQL baseline: "+err.Error())
	}
	srv, err := r.serve(ctx)
	if err != nil {
		return err
	}
	defer srv.stop()
	time.Sleep(2 * time.Second)
	r.rss = append(r.rss, srv.memory("idle, after start"))

	ws := r.wsIDs[0]
	for _, c := range []int{1, 8, 32} {
		res := r.load(ctx, srv.url, fmt.Sprintf("B3 GET workspace, %d clients", c), c, func(i int) request {
			return request{method: "GET", path: "/v1/api/workspaces/" + ws}
		})
		if script := scripts["get-workspace"]; script != "" {
			res.baseline = r.pgbench(ctx, script, c)
		}
		r.results = append(r.results, res)
	}
	msgs := r.load(ctx, srv.url, fmt.Sprintf("B2 list messages, 200 of %d, 8 clients", r.messages), 8, func(int) request {
		return request{method: "GET", path: msgsPath}
	})
	if script := scripts["list-messages"]; script != "" {
		msgs.baseline = r.pgbench(ctx, script, 8)
	}
	r.results = append(r.results, msgs)
	r.results = append(r.results, r.load(ctx, srv.url, fmt.Sprintf("B3 list workspaces (%d), 1 client", r.workspaces), 1, func(int) request {
		return request{method: "GET", path: "/v1/api/workspaces"}
	}))
	for _, c := range []int{1, 8, 32} {
		res := r.load(ctx, srv.url, fmt.Sprintf("B1' send message, runtime idle, %d clients", c), c, func(i int) request {
			return request{method: "POST", path: "/v1/api/workspaces/" + r.wsIDs[1+i] + "/messages", body: `{"text":"bench"}`}
		})
		if script := scripts["send-message"]; script != "" {
			res.baseline = r.pgbench(ctx, script, c)
		}
		r.results = append(r.results, res)
	}
	r.rss = append(r.rss, srv.memory("after B1' (runtime off)"))
	srv.stop()
	if r.only == "API" {
		return nil
	}
	if err := r.eventStreams(ctx); err != nil {
		return fmt.Errorf("B8: %w", err)
	}
	if err := r.turns(ctx); err != nil {
		return err
	}
	if err := r.blobStores(ctx); err != nil {
		return fmt.Errorf("B9: %w", err)
	}
	if err := r.environments(ctx); err != nil {
		return fmt.Errorf("B10: %w", err)
	}
	if err := r.scale(ctx, r.scaleSizes); err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	return nil
}

// setup makes the database and the tenant: an account, a key, a project mirrored from
// a small git repository, the project of B7, and the workspaces.
func (r *run) setup(ctx context.Context) error {
	store, h, acct, err := r.tenant(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	if r.only == "" {
		if r.bigProject, err = r.addBigProject(ctx, h, acct.ID); err != nil {
			return fmt.Errorf("B7 repository: %w", err)
		}
	}
	if r.only == "" || r.only == "B5" {
		none := core.NetworkNone
		p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: acct.ID, Repository: filepath.Join(r.dataDir, "repo"), Name: "none", Network: none})
		if err == nil {
			err = h.Service.Admin.PrepareProject(ctx, p)
		}
		if err != nil {
			return fmt.Errorf("B5 project with network none: %w", err)
		}
		r.noneProject = p.ID
	}
	if r.only == "" || r.only == "B10" {
		if r.envProject, err = r.addEnvProject(ctx, h, acct.ID); err != nil {
			return fmt.Errorf("B10 repository: %w", err)
		}
	}
	if err := seedWorkspaces(ctx, store.DB().DB, acct.ID, r.tinyProject, "ws_bench", r.workspaces); err != nil {
		return err
	}
	for i := 1; i <= 33; i++ {
		r.wsIDs = append(r.wsIDs, fmt.Sprintf("ws_bench%08d", i))
	}
	if r.only == "" || r.only == "API" {
		r.msgWS = fmt.Sprintf("ws_bench%08d", 100)
		if err := r.seedMessages(ctx, store.DB().DB); err != nil {
			return err
		}
	}
	if err := r.streamTenants(ctx, store, h, acct); err != nil {
		return fmt.Errorf("B8 tenants: %w", err)
	}
	_, err = store.DB().ExecContext(ctx, `ANALYZE`)
	return err
}

// seedWorkspaces inserts n workspaces of the account, named prefix and a number, ready
// as the worker would leave them, in one statement.
func seedWorkspaces(ctx context.Context, db *sql.DB, accountID, projectID, prefix string, n int) error {
	if _, err := db.ExecContext(ctx, `INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model,
		runtime_mode, branch, base_ref, origin, state, status_code, startup_phase, runtime_state, created_at, updated_at,
		last_activity_at, state_changed_at)
		SELECT $4 || lpad(g::text, 8, '0'), $1, $2, 'local', 'agent_1', 'm', 'full-access', 'bench-' || g, 'main',
			'api', 'ready', 'ready', 'running', 'online', now() + g * interval '1 millisecond', now(), now(), now()
		FROM generate_series(1, $3) g`, accountID, projectID, n, prefix); err != nil {
		return fmt.Errorf("seed workspaces: %w", err)
	}
	return nil
}

// seedMessages gives one workspace r.messages settled messages, sealed with the hub's
// key as the hub seals them, inserted 5,000 at a time.
func (r *run) seedMessages(ctx context.Context, db *sql.DB) error {
	s, err := seal.FromBase64(r.contentKey)
	if err != nil {
		return err
	}
	text := []byte(strings.Repeat("A reply of ordinary length, with a few words to carry. ", 4))
	for start := 1; start <= r.messages; start += 5000 {
		var ids, roles []string
		var seqs []int64
		var sealed [][]byte
		for seq := start; seq < start+5000 && seq <= r.messages; seq++ {
			id := fmt.Sprintf("msg_bench%08d", seq)
			b, err := s.Seal(text, "message:"+r.msgWS+":"+id)
			if err != nil {
				return err
			}
			role := "user"
			if seq%2 == 0 {
				role = "assistant"
			}
			ids, roles, seqs, sealed = append(ids, id), append(roles, role), append(seqs, int64(seq)), append(sealed, b)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome, created_at)
			SELECT v.id, $1, v.seq, v.role, v.sealed, 'settled', 'turn_' || (v.seq + 1) / 2,
				CASE WHEN v.role = 'assistant' THEN 'completed' END, now()
			FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bytea[]) AS v(id, seq, role, sealed)`,
			r.msgWS, pq.StringArray(ids), pq.Int64Array(seqs), pq.StringArray(roles), pq.ByteaArray(sealed)); err != nil {
			return fmt.Errorf("seed messages: %w", err)
		}
	}
	_, err = db.ExecContext(ctx, `UPDATE workspaces SET latest_seq = $2 WHERE id = $1`, r.msgWS, r.messages)
	return err
}

// tenant makes the run's database (migrated), and in it an account with a key and a
// project mirrored from a one-commit repository; it returns the store and an
// in-process hub on it for more seeding.
func (r *run) tenant(ctx context.Context) (*postgres.Store, *hub.Hub, *core.Account, error) {
	r.dbName = fmt.Sprintf("wshub_bench_%d%s", os.Getpid(), r.dbSuffix)
	admin, err := sql.Open("postgres", r.base)
	if err != nil {
		return nil, nil, nil, err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+r.dbName); err != nil {
		return nil, nil, nil, err
	}
	u, err := url.Parse(r.base)
	if err != nil {
		return nil, nil, nil, err
	}
	u.Path = "/" + r.dbName
	r.dbURL = u.String()
	if r.dataDir, err = os.MkdirTemp("", "wshub-bench-"); err != nil {
		return nil, nil, nil, err
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	r.contentKey = base64.StdEncoding.EncodeToString(k)

	store, err := postgres.Open(ctx, r.dbURL, postgres.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*postgres.Store, *hub.Hub, *core.Account, error) {
		store.Close()
		return nil, nil, nil, err
	}
	if err := postgres.Migrate(ctx, store.DB().DB); err != nil {
		return fail(err)
	}
	if r.pin {
		if err := pinPostgres(ctx, store.DB().DB); err != nil {
			r.notes = append(r.notes, "-pin: PostgreSQL not pinned: "+err.Error())
		}
	}
	h, err := hub.New(hub.Config{DatabaseURL: r.dbURL, DataDir: r.dataDir, ContentKey: r.contentKey,
		Retention: core.MinRetention, AgentCommands: map[string]string{}}, store, nil, hub.Options{Admin: true})
	if err != nil {
		return fail(err)
	}
	acct := &core.Account{Name: "bench", Entitled: true}
	if err := h.Service.Admin.CreateAccount(ctx, acct); err != nil {
		return fail(err)
	}
	if _, r.key, err = h.Service.Admin.CreateAPIKey(ctx, acct.ID, "bench"); err != nil {
		return fail(err)
	}
	repo := filepath.Join(r.dataDir, "repo")
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo}, {"-C", repo, "-c", "user.name=b", "-c", "user.email=b@example.com",
		"commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			return fail(fmt.Errorf("git %v: %w: %s", args, err, out))
		}
	}
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: acct.ID, Repository: repo})
	if err != nil {
		return fail(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil {
		return fail(err)
	}
	r.tinyProject = p.ID
	return store, h, acct, nil
}

// addBigProject makes a repository of r.bigFiles files (git fast-import) and adds it
// as a project, its mirror cloned: B7 measures the workspaces made from it.
func (r *run) addBigProject(ctx context.Context, h *hub.Hub, accountID string) (string, error) {
	repo := filepath.Join(r.dataDir, "big")
	if out, err := exec.CommandContext(ctx, "git", "init", "-q", "-b", "main", repo).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git init: %w: %s", err, out)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "fast-import", "--quiet")
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	werr := bigRepoStream(in, r.bigFiles)
	in.Close()
	if err := cmd.Wait(); err != nil || werr != nil {
		return "", fmt.Errorf("git fast-import: %v %v: %s", err, werr, stderr.String())
	}
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: accountID, Repository: repo, Name: "big"})
	if err != nil {
		return "", err
	}
	return p.ID, h.Service.Admin.PrepareProject(ctx, p)
}

func (r *run) teardown() {
	admin, err := sql.Open("postgres", r.base)
	if err == nil {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + r.dbName + " WITH (FORCE)")
		if r.pin {
			if err := unpinPostgres(context.Background(), admin); err != nil {
				fmt.Fprintln(os.Stderr, "-pin: PostgreSQL keeps CPU "+loadCPU+" only:", err)
			}
		}
		admin.Close()
	}
	if r.keepDir {
		fmt.Printf("checks failed: the hub and runtime logs are kept in %s\n", r.dataDir)
		return
	}
	_ = os.RemoveAll(r.dataDir)
}

// server is a running `wshub serve`.
type server struct {
	cmd *exec.Cmd
	url string
}

// serve starts `wshub serve` on the bench database; env overrides the defaults (the
// runtime and webhook delivery off: the API alone).
func (r *run) serve(ctx context.Context, env ...string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	dataDir := r.dataDir
	for _, e := range env { // a fixed address (the soak restarts the hub on it), a data directory of its own (a replica)
		if a, ok := strings.CutPrefix(e, "WSHUB_ADDR="); ok {
			addr = a
		}
		if d, ok := strings.CutPrefix(e, "WSHUB_DATA_DIR="); ok {
			dataDir = d
		}
	}
	cmd := exec.CommandContext(ctx, r.hubBin, "serve")
	if r.pin {
		cmd = exec.CommandContext(ctx, "taskset", "-c", hubCPU, r.hubBin, "serve") // taskset execs it: the same process
	}
	cmd.Env = append(os.Environ(), "DATABASE_URL="+r.dbURL, "WSHUB_ADDR="+addr, "WSHUB_DATA_DIR="+r.dataDir,
		"WSHUB_CONTENT_KEY="+r.contentKey, "WSHUB_MAX_ACTIVE_WORKSPACES=0", "WSHUB_WEBHOOK_CONCURRENCY=0", "WSHUB_API_RATE=0",
		"WSHUB_MIGRATE_ON_START=false",
		// The account holds the 10,000 workspaces of B3, and B1' leaves its sends queued
		// (runtime off): the default quotas would refuse the load being measured.
		"WSHUB_MAX_WORKSPACES=1000000", "WSHUB_MAX_OPEN_MESSAGES=1000000")
	cmd.Env = append(cmd.Env, env...) // later entries win
	logf, _ := os.OpenFile(filepath.Join(dataDir, "hub.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, url: "http://" + addr}
	if r.pids == nil {
		r.pids = map[string]int{}
	}
	r.pids[s.url] = cmd.Process.Pid
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			b, _ := os.ReadFile(filepath.Join(dataDir, "hub.log"))
			return nil, fmt.Errorf("wshub serve did not listen: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
	}
}

// kill ends the hub at once (SIGKILL), as a crash would.
func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// memory reads the hub process's resident memory now: VmRSS, and its anonymous and
// file-backed parts (most of an idle hub is pages of its own binary, which are shared
// and can be dropped; the anonymous part is what it allocated), and its proportional
// set size.
func (s *server) memory(when string) rssPoint {
	p := rssPoint{when: when}
	pid := s.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Printf("rss: %v", err)
		return p
	}
	for _, line := range splitLines(string(b)) {
		for _, f := range []struct {
			format string
			into   *int
		}{{"VmRSS: %d kB", &p.kib}, {"RssAnon: %d kB", &p.anon}, {"RssFile: %d kB", &p.file}} {
			_, _ = fmt.Sscanf(line, f.format, f.into)
		}
	}
	if b, err = os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err != nil {
		log.Printf("pss: %v", err)
		return p
	}
	for _, line := range splitLines(string(b)) {
		_, _ = fmt.Sscanf(line, "Pss: %d kB", &p.pss)
	}
	return p
}
