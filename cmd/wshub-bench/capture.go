package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// capture finds the statements the hub sends for each request: it turns on the
// statement log for the bench database, starts a hub (whose connections pick the
// setting up), sends each request twice (the first warms caches and stamps the key's
// last use), and reads what the server logged for the second. The setting is off again
// before the measured hub starts. It returns a pgbench script per request name.
func (r *run) capture(ctx context.Context, reqs map[string]request) (map[string]string, error) {
	admin, err := sql.Open("postgres", r.base)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+r.dbName+" SET log_min_duration_statement = 0"); err != nil {
		return nil, err
	}
	defer admin.ExecContext(ctx, "ALTER DATABASE "+r.dbName+" RESET log_min_duration_statement")
	srv, err := r.serve(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	hc := clientFor(1)
	scripts := map[string]string{}
	time.Sleep(2 * time.Second) // the sweeps a hub runs when it starts are over
	names := make([]string, 0, len(reqs))
	for name := range reqs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		req := reqs[name]
		if _, _, err := do(ctx, hc, srv.url, r.key, req); err != nil {
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
		fi, err := os.Stat(r.pglog)
		if err != nil {
			return nil, fmt.Errorf("server log %s: %w", r.pglog, err)
		}
		if _, ok, err := do(ctx, hc, srv.url, r.key, req); err != nil || !ok {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		time.Sleep(300 * time.Millisecond)
		stmts, err := readStatements(r.pglog, fi.Size())
		if err != nil {
			return nil, err
		}
		if len(stmts) == 0 {
			return nil, fmt.Errorf("%s: no statement logged", name)
		}
		script := strings.Join(stmts, ";\n") + ";\n"
		if req.replay != nil {
			script = req.replay(stmts)
		}
		r.captured[name] = stmts
		path := filepath.Join(r.dataDir, name+".sql")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			return nil, err
		}
		fmt.Printf("captured %d statements for %s\n", len(stmts), name)
		scripts[name] = path
	}
	return scripts, nil
}

var (
	logEntry = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \S+ \[\d+\] (\w+):  (.*)$`)
	executed = regexp.MustCompile(`(?s)^duration: [\d.]+ ms  (?:execute [^:]*|statement): (.*)$`)
	paramRE  = regexp.MustCompile(`\$(\d+) = ('(?:[^']|'')*'|NULL)`)
)

// readStatements reads the server log from offset: each executed statement, its
// parameters substituted as the literals they were bound to.
func readStatements(path string, offset int64) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, err
	}
	type entry struct{ level, text string }
	var entries []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if m := logEntry.FindStringSubmatch(line); m != nil {
			entries = append(entries, entry{m[2], m[3]})
		} else if len(entries) > 0 {
			entries[len(entries)-1].text += "\n" + line
		}
	}
	var out []string
	for i, e := range entries {
		m := executed.FindStringSubmatch(e.text)
		if e.level != "LOG" || m == nil {
			continue
		}
		stmt := strings.TrimSpace(m[1])
		if i+1 < len(entries) && entries[i+1].level == "DETAIL" && strings.HasPrefix(entries[i+1].text, "parameters: ") {
			params := map[int]string{}
			for _, p := range paramRE.FindAllStringSubmatch(entries[i+1].text, -1) {
				n, _ := strconv.Atoi(p[1])
				params[n] = p[2]
			}
			stmt = regexp.MustCompile(`\$(\d+)`).ReplaceAllStringFunc(stmt, func(s string) string {
				n, _ := strconv.Atoi(s[1:])
				if v, ok := params[n]; ok {
					return v
				}
				return s
			})
		}
		out = append(out, stmt)
	}
	return out, nil
}

// pgbench runs script at clients connections for r.dur, with the simple protocol and
// then prepared (baseline).
func (r *run) pgbench(ctx context.Context, script string, clients int) *baseline {
	b := &baseline{}
	b.tps, b.latency, b.err = r.pgbenchMode(ctx, script, clients, "simple")
	b.preparedTPS, _, b.preparedErr = r.pgbenchMode(ctx, script, clients, "prepared")
	return b
}

// pgbenchMode runs script with pgbench's query mode (-M) and returns its rate and
// average latency, or why it failed.
func (r *run) pgbenchMode(ctx context.Context, script string, clients int, mode string) (tps float64, latency time.Duration, failed string) {
	cmd := exec.CommandContext(ctx, "pgbench", "-n", "-M", mode, "-f", script, "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, 4)),
		"-T", strconv.Itoa(int(r.dur.Seconds())), r.dbURL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Sprintf("pgbench -M %s: %v: %.300s", mode, err, out)
	}
	for _, line := range splitLines(string(out)) {
		var v float64
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "tps = %f", &v); err == nil {
			tps = v
		}
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "latency average = %f ms", &v); err == nil {
			latency = time.Duration(v * float64(time.Millisecond))
		}
	}
	fmt.Printf("  pgbench -M %s, %d clients: %.0f tps, latency %.2f ms\n", mode, clients, tps, ms(latency))
	return tps, latency, ""
}

var (
	messageIDLit = regexp.MustCompile(`'msg_[A-Za-z0-9]+'`)
	turnIDLit    = regexp.MustCompile(`'turn_[A-Za-z0-9]+'`)
	insertSeq    = regexp.MustCompile(`^(INSERT INTO messages \([^)]*\)\s*VALUES \('[^']*', '[^']*', )'\d+'`)
)

// sendReplay makes a captured send replayable by pgbench at any concurrency: each
// client writes to its own workspace (client i to the i+2nd, as the load generator's
// client i does), each message gets a fresh id, and the seq the hub allocated is the
// one the replayed allocation returns (\gset). Everything else is the hub's statements
// as sent.
func sendReplay(workspaceID string, firstWorkspace int) func(stmts []string) string {
	return sendReplayTo(workspaceID, fmt.Sprintf("('ws_bench' || lpad((:client_id + %d)::text, 8, '0'))", firstWorkspace))
}

// sendReplayTo is sendReplay with each client's workspace given as an SQL expression
// of :client_id.
func sendReplayTo(workspaceID, ws string) func(stmts []string) string {
	return func(stmts []string) string {
		var b strings.Builder
		b.WriteString("\\set r random(1, 1000000000000)\n")
		for _, s := range stmts {
			s = insertSeq.ReplaceAllString(s, "${1}:latest_seq") // first: it matches the literals
			s = strings.ReplaceAll(s, "'"+workspaceID+"'", ws)
			s = messageIDLit.ReplaceAllString(s, "('msg_' || :client_id || '_' || :r)")
			s = turnIDLit.ReplaceAllString(s, "('turn_' || :client_id || '_' || :r)")
			if strings.Contains(s, "RETURNING latest_seq") {
				b.WriteString(s + " \\gset\n")
				continue
			}
			b.WriteString(s + ";\n")
		}
		return b.String()
	}
}
