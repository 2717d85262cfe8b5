package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// Saved caches of projects' environments (table project_caches, migration 00044).

type projectCacheRow struct {
	ProjectID  string    `db:"project_id"`
	Scope      string    `db:"scope"`
	Key        string    `db:"key"`
	BlobKey    string    `db:"blob_key"`
	Bytes      int64     `db:"bytes"`
	Files      int       `db:"files"`
	Parts      int       `db:"parts"`
	CreatedAt  time.Time `db:"created_at"`
	LastUsedAt time.Time `db:"last_used_at"`
}

const projectCacheColumns = `project_id, scope, key, blob_key, bytes, files, created_at, last_used_at, parts`

func (r projectCacheRow) cache() core.ProjectCache {
	return core.ProjectCache{ProjectID: r.ProjectID, Scope: r.Scope, Key: r.Key, BlobKey: r.BlobKey, Bytes: r.Bytes,
		Files: r.Files, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, Parts: max(r.Parts, 1)}
}

func projectCaches(rows []projectCacheRow) []core.ProjectCache {
	out := make([]core.ProjectCache, len(rows))
	for i, r := range rows {
		out[i] = r.cache()
	}
	return out
}

// LookupCache touches the row by its primary key and returns it: a lookup is a use,
// which keeps the cache from eviction.
func (q queries) LookupCache(ctx context.Context, projectID, scope, key string, at time.Time) (_ *core.ProjectCache, err error) {
	defer wrapErr(&err, "look up cache of %s", projectID)
	var r projectCacheRow
	if err := q.get(ctx, &r, `UPDATE project_caches SET last_used_at = greatest(last_used_at, $4)
		WHERE project_id = $1 AND scope = $2 AND key = $3 RETURNING `+projectCacheColumns, projectID, scope, key, at); err != nil {
		return nil, err
	}
	c := r.cache()
	return &c, nil
}

// RecordCache inserts the row; one of that scope and key already there wins (the
// primary key orders two replicas' saves) and nothing changes.
func (q queries) RecordCache(ctx context.Context, c core.ProjectCache) (_ bool, err error) {
	defer wrapErr(&err, "record cache of %s", c.ProjectID)
	n, err := q.exec(ctx, `INSERT INTO project_caches (`+projectCacheColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (project_id, scope, key) DO NOTHING`,
		c.ProjectID, c.Scope, c.Key, c.BlobKey, c.Bytes, c.Files, c.CreatedAt, c.LastUsedAt, max(c.Parts, 1))
	return n == 1, err
}

// EvictCaches deletes the project's caches past the first maxBytes of them, most
// recently used first (index project_caches_lru), in one statement: two replicas
// evicting at once delete each row once.
func (q queries) EvictCaches(ctx context.Context, projectID string, maxBytes int64) (_ []core.ProjectCache, err error) {
	defer wrapErr(&err, "evict caches of %s", projectID)
	var rows []projectCacheRow
	err = q.selectAll(ctx, &rows, `DELETE FROM project_caches c USING (
			SELECT scope, key, sum(bytes) OVER (ORDER BY last_used_at DESC, created_at DESC, scope, key) AS kept
			FROM project_caches WHERE project_id = $1) r
		WHERE c.project_id = $1 AND c.scope = r.scope AND c.key = r.key AND r.kept > $2
		RETURNING c.project_id, c.scope, c.key, c.blob_key, c.bytes, c.files, c.created_at, c.last_used_at`, projectID, maxBytes)
	return projectCaches(rows), err
}

// ListCaches reads the project's rows (index project_caches_lru).
func (q queries) ListCaches(ctx context.Context, projectID string) (_ []core.ProjectCache, err error) {
	defer wrapErr(&err, "list caches of %s", projectID)
	var rows []projectCacheRow
	err = q.selectAll(ctx, &rows, `SELECT `+projectCacheColumns+` FROM project_caches WHERE project_id = $1
		ORDER BY last_used_at DESC, scope, key`, projectID)
	return projectCaches(rows), err
}

// DropCaches deletes the project's rows whose key starts with keyPrefix ("" every
// one).
func (q queries) DropCaches(ctx context.Context, projectID, keyPrefix string) (_ []core.ProjectCache, err error) {
	defer wrapErr(&err, "drop caches of %s", projectID)
	var rows []projectCacheRow
	err = q.selectAll(ctx, &rows, `DELETE FROM project_caches WHERE project_id = $1 AND starts_with(key, $2)
		RETURNING `+projectCacheColumns, projectID, strings.ToLower(keyPrefix))
	return projectCaches(rows), err
}

// ForgetCache deletes the row by its primary key if it still names c's blob.
func (q queries) ForgetCache(ctx context.Context, c core.ProjectCache) (_ bool, err error) {
	defer wrapErr(&err, "forget cache of %s", c.ProjectID)
	n, err := q.exec(ctx, `DELETE FROM project_caches WHERE project_id = $1 AND scope = $2 AND key = $3 AND blob_key = $4`,
		c.ProjectID, c.Scope, c.Key, c.BlobKey)
	return n == 1, err
}
