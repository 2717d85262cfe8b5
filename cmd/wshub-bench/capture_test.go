package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The statement log as PostgreSQL 15 writes it with log_min_duration_statement = 0:
// parse, bind and execute lines per extended-protocol statement, continuation lines,
// parameters in a DETAIL line, and simple-protocol statements.
func TestReadStatements(t *testing.T) {
	log := `2026-11-23 17:43:39.108 UTC [25576] LOG:  duration: 0.274 ms  parse <unnamed>: SELECT a, b
		FROM t WHERE x = $1
2026-11-23 17:43:39.109 UTC [25576] LOG:  duration: 0.736 ms  bind <unnamed>: SELECT a, b
		FROM t WHERE x = $1
2026-11-23 17:43:39.109 UTC [25576] DETAIL:  parameters: $1 = 'it''s'
2026-11-23 17:43:39.109 UTC [25576] LOG:  duration: 0.053 ms  execute <unnamed>: SELECT a, b
		FROM t WHERE x = $1
2026-11-23 17:43:39.109 UTC [25576] DETAIL:  parameters: $1 = 'it''s'
2026-11-23 17:43:39.200 UTC [25576] LOG:  duration: 0.010 ms  statement: BEGIN
2026-11-23 17:43:39.300 UTC [25576] LOG:  duration: 0.020 ms  execute <unnamed>: UPDATE t SET a = $2 WHERE id = $1 AND b = $12
2026-11-23 17:43:39.300 UTC [25576] DETAIL:  parameters: $1 = 'x', $2 = NULL, $12 = '\x01'
2026-11-23 17:44:03.206 UTC [6993] LOG:  checkpoint starting: immediate force wait
`
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("earlier line\n"+log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readStatements(path, int64(len("earlier line\n")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"SELECT a, b\n\t\tFROM t WHERE x = 'it''s'",
		"BEGIN",
		"UPDATE t SET a = NULL WHERE id = 'x' AND b = '\\x01'",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("expected %q, got %q", want, got)
	}
}

// A captured send becomes a script each pgbench client can replay without colliding:
// its own workspace, a fresh message id, and the seq its own allocation returned.
func TestSendReplay(t *testing.T) {
	stmts := []string{
		"BEGIN",
		"SELECT w.id FROM workspaces w WHERE w.account_id = 'acct_1' AND w.id = 'ws_bench00000002' FOR UPDATE OF w",
		"UPDATE workspaces SET latest_seq = latest_seq + 1, updated_at = '2026-11-23' WHERE id = 'ws_bench00000002'\n\t\tRETURNING latest_seq",
		"INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome,\n\t\tasset_ids, created_at, delivered_at) VALUES ('msg_AbC123', 'ws_bench00000002', '51', 'user', '\\x02', 'pending', 'turn_AbC123', NULL, '{}', '2026-11-23', NULL)",
		"SELECT pg_notify('wshub_work', 'ws_bench00000002')",
		"COMMIT",
	}
	got := sendReplay("ws_bench00000002", 2)(stmts)
	ws := "('ws_bench' || lpad((:client_id + 2)::text, 8, '0'))"
	want := `\set r random(1, 1000000000000)
BEGIN;
SELECT w.id FROM workspaces w WHERE w.account_id = 'acct_1' AND w.id = ` + ws + ` FOR UPDATE OF w;
UPDATE workspaces SET latest_seq = latest_seq + 1, updated_at = '2026-11-23' WHERE id = ` + ws + `
		RETURNING latest_seq \gset
INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome,
		asset_ids, created_at, delivered_at) VALUES (('msg_' || :client_id || '_' || :r), ` + ws + `, :latest_seq, 'user', '\x02', 'pending', ('turn_' || :client_id || '_' || :r), NULL, '{}', '2026-11-23', NULL);
SELECT pg_notify('wshub_work', ` + ws + `);
COMMIT;
`
	if got != want {
		t.Fatalf("expected\n%s\ngot\n%s", want, got)
	}
}
