package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The chat inbox's claim and settle statements, on their own: one thread's events
// one at a time and in order, fencing by the claim's token, lease expiry by the
// database's clock, and concurrent claimers that never take one event twice.

func insertEvents(t *testing.T, store *postgres.Store, at time.Time, events ...[2]string) {
	t.Helper()
	for i, e := range events { // {event id, thread}
		ok, err := store.InsertChatEvent(context.Background(), &core.ChatEvent{Platform: "test", EventID: e[0], ThreadKey: e[1],
			Payload: []byte{1}, NextAt: at, At: at.Add(time.Duration(i) * time.Millisecond)})
		if err != nil || !ok {
			t.Fatalf("insert %s: %v, %v", e[0], ok, err)
		}
	}
}

func claimIDs(t *testing.T, store *postgres.Store, token string, now time.Time, lease time.Duration, limit int) map[string]*core.ChatEvent {
	t.Helper()
	got, err := store.ClaimChatEvents(context.Background(), token, now, lease, limit)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*core.ChatEvent{}
	for _, e := range got {
		out[e.EventID] = e
	}
	return out
}

func TestChatInboxClaimOrderFencingAndExpiry(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	insertEvents(t, store, now, [2]string{"a1", "A"}, [2]string{"b1", "B"}, [2]string{"a2", "A"})
	if ok, _ := store.InsertChatEvent(ctx, &core.ChatEvent{Platform: "test", EventID: "a1", ThreadKey: "A", Payload: []byte{1}, NextAt: now, At: now}); ok {
		t.Fatal("expected a duplicate event id refused")
	}

	first := claimIDs(t, store, "claim-1", now, time.Minute, 10)
	if len(first) != 2 || first["a1"] == nil || first["b1"] == nil {
		t.Fatalf("expected the oldest event of each thread (a1, b1), got %v", keys(first))
	}
	if again := claimIDs(t, store, "claim-2", now, time.Minute, 10); len(again) != 0 {
		t.Fatalf("expected nothing while a1 and b1 are leased (a2 waits behind a1), got %v", keys(again))
	}
	a1 := first["a1"]
	a1.Status, a1.Attempts = "done", 1
	if ok, err := store.SettleChatEvent(ctx, a1, "claim-2/test/a1"); err != nil || ok {
		t.Fatalf("expected a settle under another claim's token fenced out, got %v, %v", ok, err)
	}
	if ok, err := store.SettleChatEvent(ctx, a1, a1.Lease); err != nil || !ok {
		t.Fatalf("expected the settle under its own token to land, got %v, %v", ok, err)
	}
	next := claimIDs(t, store, "claim-3", now, 50*time.Millisecond, 10)
	if len(next) != 1 || next["a2"] == nil {
		t.Fatalf("expected a2 once a1 is done, got %v", keys(next))
	}
	// The lease runs out by the database's clock (the hub's "now" stays put): a new
	// claim takes a2 again, and the old claim can no longer settle it.
	var retaken map[string]*core.ChatEvent
	if !eventually.Within(10*time.Second, func() bool {
		retaken = claimIDs(t, store, "claim-4", now, time.Minute, 10)
		return len(retaken) > 0
	}) || len(retaken) != 1 || retaken["a2"] == nil {
		t.Fatalf("expected a2 re-claimed after its lease expired, got %v", keys(retaken))
	}
	stale := next["a2"]
	stale.Status = "done"
	if ok, _ := store.SettleChatEvent(ctx, stale, stale.Lease); ok {
		t.Fatal("expected the expired claim fenced out")
	}
	// Not due yet: a retry scheduled later is not claimed now.
	b1 := first["b1"]
	b1.Status, b1.Attempts, b1.NextAt = "pending", 1, now.Add(time.Hour)
	if ok, _ := store.SettleChatEvent(ctx, b1, b1.Lease); !ok {
		t.Fatal("expected b1's retry recorded")
	}
	if later := claimIDs(t, store, "claim-5", now, time.Minute, 10); len(later) != 0 {
		t.Fatalf("expected nothing due, got %v", keys(later))
	}
	if due := claimIDs(t, store, "claim-6", now.Add(2*time.Hour), time.Minute, 10); due["b1"] == nil || due["b1"].Attempts != 1 {
		t.Fatalf("expected b1 due again later with its attempt counted, got %v", keys(due))
	}
}

// Two hubs' claimers racing over many threads: every event claimed exactly once
// (FOR UPDATE SKIP LOCKED, and a lease per claim).
func TestChatInboxConcurrentClaimersNeverShare(t *testing.T) {
	t.Parallel()
	store, url := pgtest.NewStore(t)
	other, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	now := time.Now()
	const n = 60
	var evs [][2]string
	for i := range n {
		evs = append(evs, [2]string{fmt.Sprint("e", i), fmt.Sprint("T", i)})
	}
	insertEvents(t, store, now, evs...)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := store
			if w%2 == 1 {
				s = other
			}
			for i := 0; ; i++ {
				got, err := s.ClaimChatEvents(context.Background(), fmt.Sprintf("w%d-%d", w, i), now, time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					seen[e.EventID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("expected all %d events claimed, got %d", n, len(seen))
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("event %s claimed %d times", id, c)
		}
	}
}

func keys(m map[string]*core.ChatEvent) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Webhook deliveries: a claim leases due pending rows once, a settle is fenced by the
// claim's token, and a retry is not claimed before it falls due.
func TestDeliveryClaimAndSettle(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	db := store.DB()
	for _, q := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_d', 'd', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
			VALUES ('prj_d', 'acct_d', '/repo', 'repo', 'ready', now(), now())`,
		`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, created_at, updated_at)
			VALUES ('ws_d', 'acct_d', 'prj_d', 'local', 'agent_1', 'm', 'full-access', 'b', 'main', 'api', 'ready', 'ready',
			'running', 'online', now(), now())`,
		`INSERT INTO webhooks (id, account_id, url, description, secret_sealed, created_at)
			VALUES ('wh_d', 'acct_d', 'https://x.example', '', '\x01', now())`,
		`INSERT INTO events (id, account_id, workspace_id, turn_id, type, body_sealed, created_at)
			VALUES ('ev_1', 'acct_d', 'ws_d', 'turn_1', 'workspace.turn.completed', '\x01', now()),
			       ('ev_2', 'acct_d', 'ws_d', 'turn_2', 'workspace.turn.completed', '\x01', now())`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.50s: %v", q, err)
		}
	}
	now := time.Now()
	if err := store.InsertDeliveries(ctx, []*core.Delivery{
		{ID: "dl_1", AccountID: "acct_d", WebhookID: "wh_d", EventID: "ev_1", Status: "pending", MaxAttempts: 20, NextAttemptAt: now, CreatedAt: now},
		{ID: "dl_2", AccountID: "acct_d", WebhookID: "wh_d", EventID: "ev_2", Status: "pending", MaxAttempts: 20, NextAttemptAt: now.Add(time.Hour), CreatedAt: now},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := store.ClaimDueDeliveries(ctx, "c1", now, time.Minute, 10)
	if err != nil || len(got) != 1 || got[0].ID != "dl_1" {
		t.Fatalf("expected only the due delivery claimed, got %+v, %v", got, err)
	}
	if again, _ := store.ClaimDueDeliveries(ctx, "c2", now, time.Minute, 10); len(again) != 0 {
		t.Fatalf("expected a leased delivery not claimed twice, got %+v", again)
	}
	st := core.DeliverySettlement{Status: "pending", Attempts: 1, LastStatusCode: 500, LastAttemptAt: now, NextAttemptAt: now.Add(30 * time.Second)}
	if ok, _ := store.SettleDelivery(ctx, "dl_1", "c2/dl_1", st); ok {
		t.Fatal("expected another claim's token fenced out")
	}
	if ok, err := store.SettleDelivery(ctx, "dl_1", got[0].Lease, st); err != nil || !ok {
		t.Fatalf("expected the settle under its own token to land, got %v, %v", ok, err)
	}
	if early, _ := store.ClaimDueDeliveries(ctx, "c3", now.Add(10*time.Second), time.Minute, 10); len(early) != 0 {
		t.Fatalf("expected the retry not claimed before it is due, got %+v", early)
	}
	due, _ := store.ClaimDueDeliveries(ctx, "c4", now.Add(time.Minute), time.Minute, 10)
	if len(due) != 1 || due[0].ID != "dl_1" || due[0].Attempts != 1 {
		t.Fatalf("expected dl_1 due again with one attempt counted, got %+v", due)
	}
}

// Chat replies: one thread's replies are posted in seq order (the next waits until the
// one before is settled), threads side by side; a settle is fenced by its claim; a
// retry keeps the parts already posted.
func TestChatReplyClaimOrderAndFencing(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	db := store.DB()
	for _, q := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_r', 'r', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
			VALUES ('prj_r', 'acct_r', '/repo', 'repo', 'ready', now(), now())`,
		`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, created_at, updated_at)
			SELECT 'ws_r' || g, 'acct_r', 'prj_r', 'local', 'agent_1', 'm', 'full-access', 'b' || g, 'main', 'slack', 'ready', 'ready',
			'running', 'online', now(), now() FROM generate_series(1, 2) g`,
		`INSERT INTO chat_threads (platform, team_id, channel_id, thread_id, workspace_id, created_at)
			SELECT 'slack', 'T', 'C', 'th' || g, 'ws_r' || g, now() FROM generate_series(1, 2) g`,
		`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome, created_at)
			SELECT 'msg_' || w || '_' || s, 'ws_r' || w, s, 'assistant', '\x01', 'settled', 'turn_' || s, 'completed', now()
			FROM generate_series(1, 2) w, generate_series(1, 3) s`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.50s: %v", q, err)
		}
	}
	now := time.Now()
	for w := 1; w <= 2; w++ {
		for s := 1; s <= 3; s++ {
			if _, err := store.InsertChatDeliveries(ctx, fmt.Sprint("ws_r", w), fmt.Sprintf("msg_%d_%d", w, s), int64(s), false, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	claim := func(token string, at time.Time) map[string]*core.ClaimedChatReply {
		t.Helper()
		got, err := store.ClaimChatDeliveries(ctx, token, at, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*core.ClaimedChatReply{}
		for _, r := range got {
			out[r.MessageID] = r
		}
		return out
	}
	first := claim("c1", now)
	if len(first) != 2 || first["msg_1_1"] == nil || first["msg_2_1"] == nil {
		t.Fatalf("expected the first reply of each thread, got %v", len(first))
	}
	if more := claim("c2", now); len(more) != 0 {
		t.Fatalf("expected the later replies to wait for the first ones, got %d", len(more))
	}
	r := first["msg_1_1"]
	r.Status, r.Attempts, r.PartsPosted, r.NextAt = core.DeliveryPending, 1, 2, now.Add(time.Second)
	if ok, _ := store.SettleChatDelivery(ctx, r, "c2/x/y"); ok {
		t.Fatal("expected another claim's token fenced out")
	}
	if ok, err := store.SettleChatDelivery(ctx, r, r.Lease); err != nil || !ok {
		t.Fatalf("expected the retry recorded, got %v, %v", ok, err)
	}
	// Thread 1 waits for its first reply's retry; thread 2's first is still leased.
	if early := claim("c3", now); len(early) != 0 {
		t.Fatalf("expected nothing due before the retry, got %d", len(early))
	}
	retry := claim("c4", now.Add(2*time.Second))
	if got := retry["msg_1_1"]; got == nil || got.PartsPosted != 2 || got.Attempts != 1 || len(retry) != 1 {
		t.Fatalf("expected msg_1_1 again with 2 parts posted and 1 attempt, got %+v", retry)
	}
	done := retry["msg_1_1"]
	done.Status = core.DeliveryDelivered
	if ok, _ := store.SettleChatDelivery(ctx, done, done.Lease); !ok {
		t.Fatal("expected the delivery settled")
	}
	if next := claim("c5", now.Add(2*time.Second)); len(next) != 1 || next["msg_1_2"] == nil {
		t.Fatalf("expected thread 1's second reply next, got %d", len(next))
	}
}

// Chat notices: one thread's notices in order, a thread's notices side by side with
// another's, and a settle fenced by its claim; duplicates by key are not queued twice.
func TestChatNoticeClaimOrderAndFencing(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	place := func(thread string) core.ChatPlace {
		return core.ChatPlace{Platform: "slack", TeamID: "T", ChannelID: "C", ThreadID: thread}
	}
	var ns []*core.QueuedChatNotice
	for _, n := range [][2]string{{"th1", "e1:0"}, {"th1", "e1:1"}, {"th2", "e2:0"}} {
		ns = append(ns, &core.QueuedChatNotice{Place: place(n[0]), Key: n[1], Kind: core.NoticeText, SealedText: []byte{1}, At: now})
	}
	if n, err := store.InsertChatNotices(ctx, ns); err != nil || n != 3 {
		t.Fatalf("insert: %d, %v", n, err)
	}
	if n, _ := store.InsertChatNotices(ctx, ns[:1]); n != 0 {
		t.Fatalf("expected a notice key queued once, got %d more", n)
	}
	claim := func(token string) map[string]*core.ClaimedChatNotice {
		t.Helper()
		got, err := store.ClaimChatNotices(ctx, token, now, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*core.ClaimedChatNotice{}
		for _, n := range got {
			out[n.Key] = n
		}
		return out
	}
	first := claim("c1")
	if len(first) != 2 || first["e1:0"] == nil || first["e2:0"] == nil {
		t.Fatalf("expected the first notice of each thread, got %d", len(first))
	}
	n := first["e1:0"]
	n.Status, n.Attempts = core.DeliveryDelivered, 1
	if ok, _ := store.SettleChatNotice(ctx, n, "c2/1"); ok {
		t.Fatal("expected another claim's token fenced out")
	}
	if ok, err := store.SettleChatNotice(ctx, n, n.Lease); err != nil || !ok {
		t.Fatalf("expected the settle to land, got %v, %v", ok, err)
	}
	if next := claim("c3"); len(next) != 1 || next["e1:1"] == nil {
		t.Fatalf("expected th1's second notice next, got %d", len(next))
	}
}
