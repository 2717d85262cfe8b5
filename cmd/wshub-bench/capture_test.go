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
