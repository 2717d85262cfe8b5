package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// TestTakeNextTurnIsTheTurnStartInOneStatement pins TakeNextTurn case by case: the
// lease checked, the state checked, the oldest open message taken (a pending one
// marked delivered, a delivered one handed back as it was), and its stop request;
// with the workspace, its recorded environment, whether it has chat threads, its
// project and the project's secrets.
func TestTakeNextTurnIsTheTurnStartInOneStatement(t *testing.T) {
	t.Parallel()
	store, exec, leased := turnStore(t)
	ctx := context.Background()
	exec(`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		VALUES ('prj_s', 'acct_t', '/repo', 'repo', 'ready', now(), now())`)
	exec(`INSERT INTO project_secrets (project_id, name, value_sealed, agent, created_at, updated_at)
		VALUES ('prj_s', 'TOKEN', '\x01', true, now(), now()), ('prj_s', 'KEY', '\x02', false, now(), now())`)
	// workspace adds one leased, and its messages in seq order, each "status" or
	// "status stop" (a stop requested).
	workspace := func(id, state string, msgs ...string) {
		leased(id, state)
		for i, m := range msgs {
			var status, stop string
			fmt.Sscanf(m, "%s %s", &status, &stop)
			exec(`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at, delivered_at,
				stop_requested_at) VALUES ($1, $2, $3, 'user', '\x00', $4, $5, now(), CASE WHEN $4 = 'delivered' THEN now() - interval '1 minute' END,
				CASE WHEN $6 = 'stop' THEN now() END)`, fmt.Sprintf("msg_%s_%d", id, i+1), id, i+1, status, fmt.Sprintf("turn_%s_%d", id, i+1), stop)
		}
	}
	at := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	for _, c := range []struct {
		name, state string
		msgs        []string
		token       string
		// want is the message taken ("" none) as "id status", wantStop its stop
		// request, and after the messages' statuses afterwards.
		want     string
		wantStop bool
		after    string
	}{
		{name: "lease_lost", state: "ready", msgs: []string{"pending"}, token: "other", after: "pending"},
		{name: "not_ready", state: "pausing", msgs: []string{"pending"}, token: "lease", after: "pending"},
		{name: "nothing_open", state: "ready", msgs: []string{"settled", "failed"}, token: "lease", after: "settled failed"},
		{name: "pending", state: "ready", msgs: []string{"settled", "pending", "pending"}, token: "lease",
			want: "msg_pending_2 pending", after: "settled delivered pending"},
		{name: "stale", state: "ready", msgs: []string{"delivered", "pending"}, token: "lease",
			want: "msg_stale_1 delivered", after: "delivered pending"},
		{name: "stopped", state: "ready", msgs: []string{"pending stop"}, token: "lease",
			want: "msg_stopped_1 pending", wantStop: true, after: "delivered"},
	} {
		t.Run(c.name, func(t *testing.T) {
			workspace(c.name, c.state, c.msgs...)
			if c.name == "pending" {
				exec(`UPDATE workspaces SET environment = '{"source": "project"}', project_id = 'prj_s' WHERE id = 'pending'`)
				exec(`INSERT INTO chat_threads (platform, team_id, channel_id, thread_id, workspace_id, created_at)
					VALUES ('slack', 'T', 'C', '1.2', 'pending', now())`)
			}
			next, err := store.TakeNextTurn(ctx, c.name, c.token, at)
			var ws *core.Workspace
			var msg *core.StoredMessage
			if next != nil {
				ws, msg = next.Workspace, next.Message
			}
			switch {
			case c.name == "lease_lost":
				if !errors.Is(err, core.ErrNoRows) {
					t.Fatalf("expected ErrNoRows for a lost lease, got %v", err)
				}
			case err != nil:
				t.Fatal(err)
			case ws.ID != c.name || string(ws.State) != c.state || ws.LeaseToken != "lease":
				t.Fatalf("expected the workspace %s %s under its lease, got %s %s %q", c.name, c.state, ws.ID, ws.State, ws.LeaseToken)
			}
			got := ""
			if msg != nil {
				got = msg.ID + " " + string(msg.Status)
				if msg.StopRequested != c.wantStop || msg.TurnID != "turn_"+msg.ID[len("msg_"):] {
					t.Fatalf("expected %s with stop %v, got stop %v, turn %s", got, c.wantStop, msg.StopRequested, msg.TurnID)
				}
			}
			if got != c.want {
				t.Fatalf("expected the message taken %q, got %q", c.want, got)
			}
			var after string
			if err := store.DB().Get(&after, `SELECT string_agg(status, ' ' ORDER BY seq) FROM messages WHERE workspace_id = $1`, c.name); err != nil {
				t.Fatal(err)
			}
			if after != c.after {
				t.Fatalf("expected the messages %q afterwards, got %q", c.after, after)
			}
			if c.name == "stale" && (next.Environment != nil || next.ChatThreads || next.Project.ID != "prj_t" || len(next.Secrets) != 0) {
				t.Fatalf("expected no environment, chat threads nor secrets, and the project prj_t, got %s, %v, %d, %s",
					next.Environment, next.ChatThreads, len(next.Secrets), next.Project.ID)
			}
			if c.name == "pending" {
				if string(next.Environment) != `{"source": "project"}` || !next.ChatThreads {
					t.Fatalf("expected the recorded environment and chat threads, got %s, %v", next.Environment, next.ChatThreads)
				}
				var secrets []string
				for _, s := range next.Secrets {
					secrets = append(secrets, fmt.Sprintf("%s/%s=%x agent=%v", s.ProjectID, s.Name, s.SealedValue, s.Agent))
				}
				if want := "[prj_s/KEY=02 agent=false prj_s/TOKEN=01 agent=true]"; next.Project.ID != "prj_s" || fmt.Sprint(secrets) != want {
					t.Fatalf("expected the project prj_s with its secrets %s, got %s with %s", want, next.Project.ID, secrets)
				}
				var deliveredAt time.Time
				if err := store.DB().Get(&deliveredAt, `SELECT delivered_at FROM messages WHERE id = 'msg_pending_2'`); err != nil {
					t.Fatal(err)
				}
				if !deliveredAt.Equal(at) {
					t.Fatalf("expected the message delivered at %s, got %s", at, deliveredAt)
				}
			}
		})
	}
}

// TestTakeNextTurnSeesAStopThatCommittedWhileItWaited: a stop is asked in a
// transaction that holds the workspace's row (as StopTurn does) while the turn's start
// waits for it; the start, whose snapshot is older than the stop, still hands back the
// message with its stop request, so the turn ends without running its agent.
func TestTakeNextTurnSeesAStopThatCommittedWhileItWaited(t *testing.T) {
	t.Parallel()
	store, exec, leased := turnStore(t)
	ctx := context.Background()
	db := store.DB()
	leased("ws_t", "ready")
	exec(`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
		VALUES ('msg_t', 'ws_t', 1, 'user', '\x00', 'pending', 'turn_t', now())`)

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{`SELECT 1 FROM workspaces WHERE id = 'ws_t' FOR UPDATE`,
		`UPDATE messages SET stop_requested_at = now() WHERE id = 'msg_t'`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	type taken struct {
		msg *core.StoredMessage
		err error
	}
	done := make(chan taken, 1)
	go func() {
		next, err := store.TakeNextTurn(ctx, "ws_t", "lease", time.Now())
		if err != nil {
			done <- taken{nil, err}
			return
		}
		done <- taken{next.Message, nil}
	}()
	eventually.Eventually(t, 10*time.Second, "the turn's start waiting for the workspace's lock", func() bool {
		var waiting bool
		if err := db.Get(&waiting, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'WITH w AS%')`); err != nil {
			t.Fatal(err)
		}
		return waiting
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.msg == nil || got.msg.ID != "msg_t" || !got.msg.StopRequested {
		t.Fatalf("expected msg_t taken with its stop request, got %+v (%v)", got.msg, got.err)
	}
}

// turnStore is a store with an account (acct_t) and a project (prj_t); leased adds a
// workspace of theirs in a state, under the lease token "lease".
func turnStore(t *testing.T) (*postgres.Store, func(q string, args ...any), func(id, state string)) {
	store, _ := pgtest.NewStore(t)
	exec := execer(t, store.DB())
	exec(`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_t', 't', true, now())`)
	exec(`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		VALUES ('prj_t', 'acct_t', '/repo', 'repo', 'ready', now(), now())`)
	return store, exec, func(id, state string) {
		exec(`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, lease_token, lease_expires_at, created_at, updated_at)
			VALUES ($1, 'acct_t', 'prj_t', 'local', 'agent_1', 'm', 'full-access', $1, 'main', 'api', $2, 'x', 'running',
			'online', 'lease', now() + interval '1 hour', now(), now())`, id, state)
	}
}
