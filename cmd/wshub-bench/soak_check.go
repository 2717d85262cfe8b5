package main

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// drain waits until the hub has finished what the load left: no open user message, no
// workspace in a transitional state, every webhook delivery and chat post settled.
// Deliveries the flaky receiver refused wait out api.md's backoff (30 s, then 60 s).
func (s *soak) drain(ctx context.Context) error {
	db, err := sql.Open("postgres", s.r.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var open, moving, deliveries, chat int64
		err := db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM messages WHERE role = 'user' AND status IN ('pending', 'delivered')),
			(SELECT count(*) FROM workspaces WHERE state IN ('queued', 'provisioning', 'setup', 'resuming', 'pausing', 'archiving', 'deleting')),
			(SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'),
			(SELECT count(*) FROM chat_inbox WHERE status = 'pending') + (SELECT count(*) FROM chat_deliveries WHERE status = 'pending')
				+ (SELECT count(*) FROM chat_notices WHERE status = 'pending')`).Scan(&open, &moving, &deliveries, &chat)
		if err == nil && open+moving+deliveries+chat == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not drained after 4 minutes: %d open messages, %d moving workspaces, %d deliveries, %d chat rows (%v)",
				open, moving, deliveries, chat, err)
		}
		time.Sleep(2 * time.Second)
	}
}

// verify runs the end checks on the database and the receivers.
func (s *soak) verify(ctx context.Context) error {
	db, err := sql.Open("postgres", s.r.dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	count := func(name, query string, args ...any) {
		var n int64
		if err := db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			s.checks = append(s.checks, check{name: name, failed: -1, detail: err.Error()})
			return
		}
		s.checks = append(s.checks, check{name: name, failed: n})
	}

	// What each workspace holds against what the clients were told was accepted.
	stored := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT workspace_id, count(*) FROM messages WHERE role = 'user' GROUP BY workspace_id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var ws string
		var n int
		if err := rows.Scan(&ws, &n); err != nil {
			return err
		}
		stored[ws] = n
	}
	rows.Close()
	var lost, dup int64
	var detail []string
	// tally compares what a client was told was accepted with what was stored.
	tally := func(what string, accepted, got int) {
		if got < accepted {
			lost += int64(accepted - got)
		} else if got > accepted {
			dup += int64(got - accepted)
		}
		if got != accepted {
			detail = append(detail, fmt.Sprintf("%s: %d accepted, %d stored", what, accepted, got))
		}
	}
	for ws, n := range s.apiWS {
		tally(ws, n, stored[ws])
	}
	threadWS := map[string]string{}
	rows, err = db.QueryContext(ctx, `SELECT thread_id, workspace_id FROM chat_threads WHERE team_id = $1`, soakTeam)
	if err != nil {
		return err
	}
	for rows.Next() {
		var th, ws string
		if err := rows.Scan(&th, &ws); err != nil {
			return err
		}
		threadWS[th] = ws
	}
	rows.Close()
	for th, n := range s.threads {
		tally("Slack thread "+th, n, stored[threadWS[th]])
	}
	s.checks = append(s.checks, check{name: "user messages lost (accepted by the API or Slack, not stored)", failed: lost, detail: strings.Join(detail, "; ")},
		check{name: "user messages duplicated (stored more often than accepted)", failed: dup})

	count("user messages not settled", `SELECT count(*) FROM messages WHERE role = 'user' AND status <> 'settled'`)
	count("settled turns without exactly one assistant message", `SELECT count(*) FROM messages u WHERE u.role = 'user'
		AND (SELECT count(*) FROM messages a WHERE a.role = 'assistant' AND a.workspace_id = u.workspace_id AND a.turn_id = u.turn_id) <> 1`)
	count("assistant messages without their user message", `SELECT count(*) FROM messages a WHERE a.role = 'assistant'
		AND NOT EXISTS (SELECT 1 FROM messages u WHERE u.role = 'user' AND u.workspace_id = a.workspace_id AND u.turn_id = a.turn_id)`)
	count("turns without exactly one workspace.turn.completed event", `SELECT count(*) FROM messages a WHERE a.role = 'assistant'
		AND (SELECT count(*) FROM events e WHERE e.workspace_id = a.workspace_id AND e.turn_id = a.turn_id) <> 1`)
	count("events not delivered to every endpoint", `SELECT count(*) FROM events e CROSS JOIN webhooks w
		WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.webhook_id = w.id AND d.status = 'delivered')`)
	count("workspaces in a transitional state", `SELECT count(*) FROM workspaces
		WHERE state IN ('queued', 'provisioning', 'setup', 'resuming', 'pausing', 'archiving', 'deleting')`)
	count("workspaces failed", `SELECT count(*) FROM workspaces WHERE state = 'failed'`)
	count("Slack events not handled", `SELECT count(*) FROM chat_inbox WHERE status <> 'done'`)
	count("Slack replies not posted", `SELECT count(*) FROM chat_deliveries WHERE status <> 'delivered'`)

	// Every event reached both receivers (at least once), as they saw it.
	var ids []string
	rows, err = db.QueryContext(ctx, `SELECT id FROM events`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, rc := range []*soakReceiver{s.ok, s.flaky} {
		missing := 0
		rc.mu.Lock()
		for _, id := range ids {
			if !rc.acked[id] {
				missing++
			}
		}
		rc.mu.Unlock()
		name := "events the always-up receiver did not acknowledge"
		if rc.flaky {
			name = "events the flaky receiver did not acknowledge"
		}
		s.checks = append(s.checks, check{name: name, failed: int64(missing)})
	}
	s.mu.Lock()
	s.checks = append(s.checks, check{name: "5xx or refused connections outside the restart windows", failed: int64(len(s.bad)),
		detail: strings.Join(first(s.bad, 5), "; ")},
		check{name: "unexpected answers (4xx to a valid request)", failed: int64(len(s.anomalies)), detail: strings.Join(first(s.anomalies, 5), "; ")})
	s.mu.Unlock()
	return nil
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// outcomes counts the recorded turns by outcome (the report's figures).
func (s *soak) outcomes(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	db, err := sql.Open("postgres", s.r.dbURL)
	if err != nil {
		return out
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT outcome, count(*) FROM messages WHERE role = 'assistant' GROUP BY outcome`)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var o string
		var n int64
		if rows.Scan(&o, &n) == nil {
			out[o] = n
		}
	}
	return out
}

// failed is the number of checks that did not pass.
func (s *soak) failed() int {
	n := 0
	for _, c := range s.checks {
		if c.failed != 0 {
			n++
		}
	}
	if len(s.fuzz.failures) > 0 {
		n++
	}
	return n
}

// markdown is the soak's report (docs/soak.md).
func (s *soak) markdown() string {
	var b strings.Builder
	if len(s.hubs) > 1 {
		s.replicasIntro(&b)
	} else {
		b.WriteString("# Soak\n\nWritten by `make soak` (`cmd/wshub-bench -soak`); rerun it to reproduce. A real `wshub serve` ")
		b.WriteString("under steady load (a workspace created about every 0.8 s, two senders each sending every 0.25 s, Slack mentions about every 0.7 s, ")
		b.WriteString("turns of a command agent of which one in eight takes a second, webhook deliveries to an always-up receiver ")
		b.WriteString("and to one that answers 500 to about a third of attempts), SIGKILLed and restarted, and PostgreSQL ")
		b.WriteString("stopped and started once. Clients retry as the API asks: the same Idempotency-Key, the same Slack event. ")
		b.WriteString("Then every check below runs against the database and the receivers.\n\n")
		fmt.Fprintf(&b, "Run %s: %s of load, %d hub kills, PostgreSQL restarted: %v.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
			s.dur, s.kills, s.pgRestart != "")
	}
	s.mu.Lock()
	nws, events, reqs, tol := len(s.apiWS), s.events, s.requests, s.tolerated
	accepted := 0
	for _, n := range s.apiWS {
		accepted += n
	}
	windows := len(s.windows)
	posts := s.posts
	s.mu.Unlock()
	fmt.Fprintf(&b, "Load: %d requests; %d workspaces created through the API holding %d accepted user messages; %d Slack events "+
		"in %d threads; %d Slack posts. %d requests met a 5xx or a refused connection inside the %d restart windows and were retried.\n\n",
		reqs, nws, accepted, events, len(s.threads), posts, tol, windows)
	var turns []string
	for o, n := range s.turns {
		turns = append(turns, fmt.Sprintf("%s %d", o, n))
	}
	slices.Sort(turns)
	fmt.Fprintf(&b, "Turns recorded: %s. The flaky receiver refused %d attempts.\n\n", strings.Join(turns, ", "), s.flaky.fails)
	b.WriteString("| check | failing | |\n|---|---|---|\n")
	for _, c := range s.checks {
		mark := "ok"
		if c.failed != 0 {
			mark = "**FAILED**"
		}
		fmt.Fprintf(&b, "| %s | %d | %s %s |\n", c.name, c.failed, mark, c.detail)
	}
	fmt.Fprintf(&b, "\nMalformed requests: %d random requests in %s against every endpoint (bad auth, ids, queries, bodies, "+
		"media types and encodings); answers by status: %s. Failures (a 500, or an answer openapi.yaml does not allow): %d.\n",
		s.fuzz.requests, s.fuzz.took.Round(time.Second), s.fuzz.statuses(), len(s.fuzz.failures))
	for _, f := range first(s.fuzz.failures, 10) {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	if len(s.hubs) > 1 {
		b.WriteString("\n" + soakReplicasEnd + "\n")
	}
	return b.String()
}

// The two-hub run's section of docs/soak.md, between markers: each mode rewrites its
// own part of the file and keeps the other's.
const (
	soakReplicasBegin = "<!-- two hubs: written by make soak HUBS=2, which rewrites this part alone; make soak keeps it -->"
	soakReplicasEnd   = "<!-- end of two hubs -->"
)

// place puts the report into the file's old content: the two-hub section replaces its
// own part, the one-hub report the rest.
func (s *soak) place(old, report string) string {
	if len(s.hubs) > 1 {
		return splice(old, soakReplicasBegin, soakReplicasEnd, report)
	}
	i, j := strings.Index(old, soakReplicasBegin), strings.Index(old, soakReplicasEnd)
	if i < 0 || j < i {
		return report
	}
	return report + "\n" + old[i:j+len(soakReplicasEnd)] + "\n"
}

// replicasIntro opens the two-hub section: what ran, and where the kills went.
func (s *soak) replicasIntro(b *strings.Builder) {
	b.WriteString(soakReplicasBegin + "\n")
	fmt.Fprintf(b, "## %d hubs, no shared disk\n\n", len(s.hubs))
	fmt.Fprintf(b, "Written by `make soak HUBS=%d` (`cmd/wshub-bench -soak -hubs %d`). The same load and checks as the one-hub soak, ", len(s.hubs), len(s.hubs))
	fmt.Fprintf(b, "against %d `wshub serve` processes on one database that share no disk: each has a data directory of its own ", len(s.hubs))
	b.WriteString("(its own mirror of the project and its own caches of the branches), and attachments and the bundles of workspaces' ")
	b.WriteString("branches are in the blob store in PostgreSQL (`WSHUB_BLOBS=postgres`). Workspaces run on the `process` provider ")
	b.WriteString("(a `wshub runtime` process per workspace, in the directory of the hub that started it), since a `local` workspace lives ")
	b.WriteString("on its hub's disk. A round-robin balancer in the soak, which passes over a hub that refused a connection for 5 s, ")
	b.WriteString("takes the clients' requests (API calls, Slack events) and the runtimes' calls, so each of them reaches both hubs. ")
	b.WriteString("Both hubs have the same settings (Slack's included) and the same fake Slack. The kills take the hubs in turn, ")
	b.WriteString("each followed by a restart of that hub on its address and data directory; runtimes outlive a killed hub and go on ")
	b.WriteString("through the balancer.\n\n")
	fmt.Fprintf(b, "Command: `%s`.\n\n", s.command)
	s.mu.Lock()
	var kills []string
	for _, h := range s.hubs {
		kills = append(kills, fmt.Sprintf("hub %s %d", h.name, h.kills))
	}
	s.mu.Unlock()
	fmt.Fprintf(b, "Run %s: %s of load, %d hub kills (%s), PostgreSQL restarted: %v.\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		s.dur, s.kills, strings.Join(kills, ", "), s.pgRestart != "")
	served := s.lb.Served()
	var per []string
	for _, h := range s.hubs {
		per = append(per, fmt.Sprintf("%d to hub %s", served[strings.TrimPrefix(h.url, "http://")], h.name))
	}
	fmt.Fprintf(b, "Balancer: %s (the clients' requests and the runtimes' calls). Runtime processes still running at the end, "+
		"stopped by the soak: %d.\n\n", strings.Join(per, ", "), s.leftover)
}
