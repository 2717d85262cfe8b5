// Package pgscale fills a migrated database with a year of a busy hub's data in a few
// SQL statements (generate_series), not through the hub: 100,000 workspaces and 2
// million messages take seconds, not the hours the API would. The rows are the hub's
// own shape (every constraint, and the columns the hub fills when it writes them), so
// the hub reads them as it reads its own; the bench's scale run (cmd/wshub-bench) and
// the plan test (adapters/postgres) share it.
package pgscale

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

//go:embed scale.sql
var script string

// Spec is what Generate makes.
type Spec struct {
	// AccountID and ProjectID are an existing account and its project: they get the
	// newest PerAccount workspaces (the same rows at any size) and a webhook endpoint.
	// The older ones go to accounts of their own, PerAccount each, made here with a
	// project and an endpoint.
	AccountID, ProjectID string
	// Prefix names every generated row: workspace g (oldest first, from 1) is "ws_" +
	// Prefix + g in 8 digits.
	Prefix     string
	Workspaces int
	PerAccount int
	// Messages is each workspace's message count: Messages/2 settled turns.
	Messages int
	// Seal, when set, seals each message's text under its binding ("message:" +
	// workspace + ":" + message) as the hub does; nil leaves a placeholder no hub
	// opens (enough to plan queries).
	Seal func(plaintext []byte, binding string) ([]byte, error)
}

// messageBatch is how many messages one INSERT writes (its sealed texts are one
// parameter).
const messageBatch = 100_000

// WorkspaceID is the id of the generated workspace g (1-based).
func (s Spec) WorkspaceID(g int) string { return fmt.Sprintf("ws_%s%08d", s.Prefix, g) }

// Ready is the ids of the n newest of the caller's workspaces that are ready (every
// workspace of the last day but the fifth deleted by hand; n up to 200).
func (s Spec) Ready(n int) []string {
	var out []string
	for g := s.Workspaces; g > 0 && len(out) < n; g-- {
		if g%5 != 0 {
			out = append(out, s.WorkspaceID(g))
		}
	}
	return out
}

// Generate inserts what spec describes. The caller runs ANALYZE afterwards.
func Generate(ctx context.Context, db *sql.DB, spec Spec) error {
	if spec.Workspaces < 1 || spec.PerAccount < 1 || spec.Messages < 0 {
		return fmt.Errorf("pgscale: %d workspaces, %d per account, %d messages each", spec.Workspaces, spec.PerAccount, spec.Messages)
	}
	stmts := statements()
	extra := (spec.Workspaces+spec.PerAccount-1)/spec.PerAccount - 1
	steps := []struct {
		name string
		args []any
	}{
		{"accounts", []any{spec.Prefix, extra}},
		{"projects", []any{spec.Prefix, extra}},
		{"webhooks", []any{spec.Prefix, extra, spec.AccountID}},
		{"workspaces", []any{spec.Prefix, spec.Workspaces, spec.PerAccount, spec.Messages, spec.AccountID, spec.ProjectID}},
	}
	if spec.Messages >= 2 {
		steps = append(steps, []struct {
			name string
			args []any
		}{
			{"events", []any{spec.Prefix, spec.Workspaces, spec.PerAccount, spec.Messages}},
			{"deliveries", []any{spec.Prefix, spec.Workspaces, spec.PerAccount}},
			{"attempts", []any{spec.Prefix, spec.Workspaces}},
		}...)
	}
	for _, st := range steps {
		if _, err := db.ExecContext(ctx, stmts[st.name], st.args...); err != nil {
			return fmt.Errorf("pgscale: %s: %w", st.name, err)
		}
		if st.name == "workspaces" {
			if err := spec.messages(ctx, db, stmts["messages"]); err != nil {
				return err
			}
		}
	}
	return nil
}

// messages inserts every workspace's messages, messageBatch at a time; the next
// batch's texts are sealed while PostgreSQL inserts the last.
func (s Spec) messages(ctx context.Context, db *sql.DB, stmt string) error {
	total := int64(s.Workspaces) * int64(s.Messages)
	type batch struct {
		first, last int64
		sealed      pq.ByteaArray
		err         error
	}
	batches := make(chan batch, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(batches)
		for first := int64(0); first < total; first += messageBatch {
			b := batch{first: first, last: min(first+messageBatch, total) - 1}
			b.sealed, b.err = s.seal(b.first, b.last)
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		if _, err := db.ExecContext(ctx, stmt, s.Prefix, b.first, b.last, b.sealed, s.Messages, s.Workspaces); err != nil {
			return fmt.Errorf("pgscale: messages %d-%d: %w", b.first, b.last, err)
		}
	}
	return nil
}

// seal is the sealed texts of messages first to last (0-based, workspace by
// workspace), or none without s.Seal.
func (s Spec) seal(first, last int64) (pq.ByteaArray, error) {
	sealed := pq.ByteaArray{}
	if s.Seal == nil {
		return sealed, nil
	}
	text := []byte("A message of ordinary length, a few words to carry.")
	for k := first; k <= last; k++ {
		ws := s.WorkspaceID(int(k/int64(s.Messages)) + 1)
		id := fmt.Sprintf("msg_%s_%d", ws[len("ws_"):], k%int64(s.Messages)+1)
		b, err := s.Seal(text, "message:"+ws+":"+id)
		if err != nil {
			return nil, fmt.Errorf("pgscale: seal: %w", err)
		}
		sealed = append(sealed, b)
	}
	return sealed, nil
}

// statements splits the script at its "-- name: " lines.
func statements() map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(script, "-- name: ")[1:] {
		head, stmt, _ := strings.Cut(part, "\n")
		name, _, _ := strings.Cut(head, " ")
		out[name] = stmt
	}
	return out
}
