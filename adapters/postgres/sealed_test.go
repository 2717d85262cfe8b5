package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// Every bytea column named *_sealed must be a kind Reseal visits, or a rotation would
// leave it under the old key. A new sealed column fails here until it is listed.
func TestEverySealedColumnIsResealed(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	var cols []string
	if err := store.DB().Select(&cols, `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name LIKE '%\_sealed' ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	covered := postgres.SealedColumns()
	for _, c := range cols {
		if !covered[c] {
			t.Errorf("sealed column %s is not re-sealed by any core.SealedKind", c)
		}
	}
	if len(cols) != len(covered) {
		t.Errorf("expected %d sealed columns, schema has %d: %v", len(covered), len(cols), cols)
	}
}

// Listing pages by primary key (composite keys included) and a replacement swaps only
// values still as listed.
func TestSealedValuesPageAndSwapOnlyUnchanged(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	for i := range 5 {
		if _, err := store.DB().ExecContext(ctx, `INSERT INTO chat_inbox (platform, event_id, thread_key, payload_sealed, status, next_attempt_at, received_at)
			VALUES ($1, $2, 't', $3, 'pending', now(), now())`, []string{"discord", "slack"}[i%2], fmt.Sprint("ev", i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.DB().ExecContext(ctx, `INSERT INTO chat_notices (platform, team_id, channel_id, thread_id, notice_key, kind, text_sealed, status, next_attempt_at, created_at)
			VALUES ('slack', 'T', 'C', 'th', $1, 'text', $2, 'pending', now(), now())`, fmt.Sprint("k", i), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A workspace_failed notice has no text: it is not listed.
	if _, err := store.DB().ExecContext(ctx, `INSERT INTO chat_notices (platform, team_id, channel_id, thread_id, notice_key, kind, status, next_attempt_at, created_at)
		VALUES ('slack', 'T', 'C', 'th', 'failed:x', 'workspace_failed', 'pending', now(), now())`); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []core.SealedKind{core.SealedChatEvent, core.SealedChatNotice} {
		var all []core.SealedValue
		after := ""
		for pages := 0; ; pages++ {
			page, err := store.SealedValues(ctx, kind, after, 2)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if len(page) == 0 {
				if pages != 3 {
					t.Errorf("%s: expected 3 pages of at most 2, got %d", kind, pages)
				}
				break
			}
			all = append(all, page...)
			after = page[len(page)-1].Cursor
		}
		if len(all) != 5 {
			t.Fatalf("%s: expected 5 values, got %d: %+v", kind, len(all), all)
		}
		seen := map[string]bool{}
		for _, v := range all {
			if seen[v.Owner+"/"+v.ID] {
				t.Fatalf("%s: %s/%s listed twice", kind, v.Owner, v.ID)
			}
			seen[v.Owner+"/"+v.ID] = true
		}
		// Value 0 is changed by "the hub" after listing: only the other four swap.
		stale := all[0]
		place := map[core.SealedKind][2]string{core.SealedChatEvent: {"chat_inbox", "payload_sealed"}, core.SealedChatNotice: {"chat_notices", "text_sealed"}}[kind]
		table, col := place[0], place[1]
		if _, err := store.DB().ExecContext(ctx, `UPDATE `+table+` SET `+col+` = '\xff'::bytea WHERE `+col+` = $1`, stale.Sealed); err != nil {
			t.Fatal(err)
		}
		swaps := make([]core.SealedReplacement, len(all))
		for i, v := range all {
			swaps[i] = core.SealedReplacement{Value: v, New: append([]byte("new"), v.Sealed...)}
		}
		n, err := store.ReplaceSealed(ctx, kind, swaps)
		if err != nil || n != 4 {
			t.Fatalf("%s: expected 4 swapped (one changed meanwhile), got %d, %v", kind, n, err)
		}
		again, err := store.SealedValues(ctx, kind, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range again {
			if !bytes.Equal(v.Sealed, []byte{0xff}) && !bytes.HasPrefix(v.Sealed, []byte("new")) {
				t.Errorf("%s %s/%s: expected swapped or left as the hub wrote it, got %x", kind, v.Owner, v.ID, v.Sealed)
			}
		}
	}
}
