package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type assetRow struct {
	ID           string    `db:"id"`
	AccountID    string    `db:"account_id"`
	WorkspaceID  string    `db:"workspace_id"`
	MimeType     string    `db:"mime_type"`
	OriginalName string    `db:"original_name"`
	SizeBytes    int64     `db:"size_bytes"`
	SHA256       []byte    `db:"sha256"`
	BlobKey      string    `db:"blob_key"`
	CreatedAt    time.Time `db:"created_at"`
}

func (r *assetRow) core() *core.Asset {
	return &core.Asset{ID: r.ID, AccountID: r.AccountID, WorkspaceID: r.WorkspaceID, MimeType: r.MimeType,
		OriginalName: r.OriginalName, SizeBytes: r.SizeBytes, SHA256: r.SHA256, BlobKey: r.BlobKey, CreatedAt: r.CreatedAt}
}

const assetColumns = `id, account_id, workspace_id, mime_type, original_name, size_bytes, sha256, blob_key, created_at`

func (q queries) InsertAsset(ctx context.Context, a *core.Asset) (err error) {
	defer wrapErr(&err, "insert asset")
	_, err = q.exec(ctx, `INSERT INTO assets (`+assetColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.ID, a.AccountID, a.WorkspaceID, a.MimeType, a.OriginalName, a.SizeBytes, a.SHA256, a.BlobKey, a.CreatedAt)
	return err
}

// GetAsset uses assets_workspace.
func (q queries) GetAsset(ctx context.Context, workspaceID, id string) (_ *core.Asset, err error) {
	defer wrapErr(&err, "get asset")
	var r assetRow
	if err := q.get(ctx, &r, `SELECT `+assetColumns+` FROM assets WHERE workspace_id = $1 AND id = $2`, workspaceID, id); err != nil {
		return nil, err
	}
	return r.core(), nil
}

// AssetBlobKeys lists where a workspace's attachment bytes are (assets_workspace).
func (q queries) AssetBlobKeys(ctx context.Context, workspaceID string) (_ []string, err error) {
	defer wrapErr(&err, "asset blob keys")
	var keys []string
	err = q.selectAll(ctx, &keys, `SELECT blob_key FROM assets WHERE workspace_id = $1 ORDER BY id`, workspaceID)
	return keys, err
}

// AssetsByID uses assets_workspace.
func (q queries) AssetsByID(ctx context.Context, workspaceID string, ids []string) (_ []*core.Asset, err error) {
	defer wrapErr(&err, "assets by ID")
	var rows []assetRow
	if err := q.selectAll(ctx, &rows, `SELECT `+assetColumns+` FROM assets WHERE workspace_id = $1 AND id = ANY($2)`,
		workspaceID, pq.StringArray(ids)); err != nil {
		return nil, err
	}
	out := make([]*core.Asset, len(rows))
	for i := range rows {
		out[i] = rows[i].core()
	}
	return out, nil
}
