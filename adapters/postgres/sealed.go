package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

var _ core.SealedStore = (*Store)(nil)

// sealedPlace says where one kind of sealed value lives. key is the row's identity
// (the keyset cursor, in order); owner and id build the value's binding.
type sealedPlace struct {
	table, column string
	key           []string // primary key columns, in cursor order
	keyTypes      []string // their SQL array types for unnest
	owner, id     string
	blobKey       string // assets: the column naming the blob (column is unused)
}

var sealedPlaces = map[core.SealedKind]sealedPlace{
	core.SealedMessageText:       {table: "messages", column: "text_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "workspace_id", id: "id"},
	core.SealedMessageFailure:    {table: "messages", column: "failure_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "workspace_id", id: "id"},
	core.SealedWebhookSecret:     {table: "webhooks", column: "secret_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "account_id", id: "id"},
	core.SealedEventBody:         {table: "events", column: "body_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "account_id", id: "id"},
	core.SealedChatEvent:         {table: "chat_inbox", column: "payload_sealed", key: []string{"platform", "event_id"}, keyTypes: []string{"text", "text"}, owner: "platform", id: "event_id"},
	core.SealedChatNotice:        {table: "chat_notices", column: "text_sealed", key: []string{"id"}, keyTypes: []string{"bigint"}, owner: "platform", id: "notice_key"},
	core.SealedTurnEvent:         {table: "turn_events", column: "body_sealed", key: []string{"id"}, keyTypes: []string{"bigint"}, owner: "workspace_id", id: "turn_id"},
	core.SealedProjectCredential: {table: "projects", column: "credential_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "account_id", id: "id"},
	core.SealedProjectSecret:     {table: "project_secrets", column: "value_sealed", key: []string{"project_id", "name"}, keyTypes: []string{"text", "text"}, owner: "project_id", id: "name"},
	core.SealedWorkspaceTitle:    {table: "workspaces", column: "title_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "account_id", id: "id"},
	core.SealedForgeSecret:       {table: "project_forge_events", column: "secret_sealed", key: []string{"project_id"}, keyTypes: []string{"text"}, owner: "account_id", id: "project_id"},
	core.SealedSchedulePrompt:    {table: "schedules", column: "prompt_sealed", key: []string{"id"}, keyTypes: []string{"text"}, owner: "account_id", id: "id"},
	core.SealedGitHubAppSecret:   {table: "account_github_apps", column: "secret_sealed", key: []string{"account_id"}, keyTypes: []string{"text"}, owner: "account_id", id: "account_id"},
	core.SealedGitHubAppKey:      {table: "account_github_apps", column: "key_sealed", key: []string{"account_id"}, keyTypes: []string{"text"}, owner: "account_id", id: "account_id"},
	core.SealedAsset:             {table: "assets", key: []string{"id"}, keyTypes: []string{"text"}, owner: "workspace_id", id: "id", blobKey: "blob_key"},
}

// cursorSep joins the parts of a composite key in a cursor; no key part holds it.
const cursorSep = "\x1f"

type sealedRow struct {
	Cursor  string `db:"cursor"`
	Owner   string `db:"owner"`
	ID      string `db:"id"`
	Sealed  []byte `db:"sealed"`
	BlobKey string `db:"blob_key"`
}

// SealedValues lists one kind's sealed values by primary key (keyset pagination on
// the primary key index, so each batch is an index range scan).
func (s *Store) SealedValues(ctx context.Context, kind core.SealedKind, after string, limit int) (_ []core.SealedValue, err error) {
	defer wrapErr(&err, "list sealed %s", kind)
	p, ok := sealedPlaces[kind]
	if !ok {
		return nil, fmt.Errorf("unknown sealed kind %q", kind)
	}
	// ORDER BY names the table's columns: an output column of the same name wins there,
	// and "id" is the value's binding id (chat_notices' notice_key, turn_events'
	// turn_id), not the key.
	qualified := make([]string, len(p.key))
	for i, k := range p.key {
		qualified[i] = p.table + "." + k
	}
	keyText := make([]string, len(p.key))
	params := make([]string, len(p.key))
	for i, k := range p.key {
		keyText[i] = k + "::text"
		params[i] = fmt.Sprintf("$%d::%s", i+2, p.keyTypes[i])
	}
	sealed, blob, filter := "NULL::bytea", "''", ""
	if p.column != "" {
		sealed, filter = p.column, " AND "+p.column+" IS NOT NULL"
	}
	if p.blobKey != "" {
		// A deleted workspace's blobs are gone (deleteBlobs) while its asset rows stay:
		// they hold nothing to reseal. Any other asset's blob must be there.
		blob, filter = p.blobKey, " AND NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = assets.workspace_id AND w.state IN ('deleting', 'deleted'))"
	}
	where := "TRUE"
	args := []any{limit}
	if after != "" {
		parts := strings.Split(after, cursorSep)
		if len(parts) != len(p.key) {
			return nil, fmt.Errorf("bad cursor for %s", kind)
		}
		where = "(" + strings.Join(p.key, ", ") + ") > (" + strings.Join(params, ", ") + ")"
		for _, part := range parts {
			args = append(args, part)
		}
	}
	query := fmt.Sprintf(`SELECT concat_ws(E'\x1f', %s) AS cursor, %s AS owner, %s AS id, %s AS sealed, %s AS blob_key
		FROM %s WHERE %s%s ORDER BY %s LIMIT $1`,
		strings.Join(keyText, ", "), p.owner, p.id, sealed, blob, p.table, where, filter, strings.Join(qualified, ", "))
	var rows []sealedRow
	if err := s.selectAll(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	out := make([]core.SealedValue, len(rows))
	for i, r := range rows {
		out[i] = core.SealedValue{Cursor: r.Cursor, Owner: r.Owner, ID: r.ID, Sealed: r.Sealed, BlobKey: r.BlobKey}
	}
	return out, nil
}

// ReplaceSealed swaps a batch in one statement, each row only where its value is
// still the one listed (a row the hub rewrote or deleted meanwhile is left alone).
func (s *Store) ReplaceSealed(ctx context.Context, kind core.SealedKind, r []core.SealedReplacement) (_ int, err error) {
	defer wrapErr(&err, "replace sealed %s", kind)
	p, ok := sealedPlaces[kind]
	if !ok || p.column == "" {
		return 0, fmt.Errorf("sealed kind %q has no column to replace", kind)
	}
	keys := make([]pq.StringArray, len(p.key))
	olds, news := make(pq.ByteaArray, len(r)), make(pq.ByteaArray, len(r))
	for i, x := range r {
		parts := strings.Split(x.Value.Cursor, cursorSep)
		if len(parts) != len(p.key) {
			return 0, fmt.Errorf("bad cursor for %s", kind)
		}
		for j := range p.key {
			keys[j] = append(keys[j], parts[j])
		}
		olds[i], news[i] = x.Value.Sealed, x.New
	}
	cols := make([]string, 0, len(p.key)+2)
	arrays := make([]string, 0, len(p.key)+2)
	match := make([]string, 0, len(p.key)+1)
	args := make([]any, 0, len(p.key)+2)
	for j, k := range p.key {
		cols = append(cols, "k"+fmt.Sprint(j))
		arrays = append(arrays, fmt.Sprintf("$%d::%s[]", j+1, p.keyTypes[j]))
		match = append(match, fmt.Sprintf("t.%s = v.k%d", k, j))
		args = append(args, keys[j])
	}
	n := len(p.key)
	arrays = append(arrays, fmt.Sprintf("$%d::bytea[]", n+1), fmt.Sprintf("$%d::bytea[]", n+2))
	cols = append(cols, "old", "new")
	match = append(match, "t."+p.column+" = v.old")
	args = append(args, olds, news)
	query := fmt.Sprintf(`UPDATE %s t SET %s = v.new FROM unnest(%s) AS v(%s) WHERE %s`,
		p.table, p.column, strings.Join(arrays, ", "), strings.Join(cols, ", "), strings.Join(match, " AND "))
	changed, err := s.exec(ctx, query, args...)
	return int(changed), err
}

// SealedColumns lists the table.column of every place Reseal visits (tests check the
// schema has no other).
func SealedColumns() map[string]bool {
	out := map[string]bool{}
	for _, p := range sealedPlaces {
		if p.column != "" {
			out[p.table+"."+p.column] = true
		}
	}
	return out
}
