package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type projectSecretRow struct {
	ProjectID string    `db:"project_id"`
	Name      string    `db:"name"`
	Sealed    []byte    `db:"value_sealed"`
	Agent     bool      `db:"agent"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// ListProjectSecrets reads a project's secrets in name order (the primary key's range).
func (q queries) ListProjectSecrets(ctx context.Context, projectID string) (_ []*core.ProjectSecret, err error) {
	defer wrapErr(&err, "list project secrets")
	var rows []projectSecretRow
	if err := q.selectAll(ctx, &rows, `SELECT project_id, name, value_sealed, agent, created_at, updated_at
		FROM project_secrets WHERE project_id = $1 ORDER BY name`, projectID); err != nil {
		return nil, err
	}
	out := make([]*core.ProjectSecret, len(rows))
	for i, r := range rows {
		out[i] = &core.ProjectSecret{ProjectID: r.ProjectID, Name: r.Name, Agent: r.Agent, SealedValue: r.Sealed,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	}
	return out, nil
}

// ProjectSecretNames reads the secrets' names of many projects in one statement, on the
// primary key's ranges.
func (q queries) ProjectSecretNames(ctx context.Context, projectIDs []string) (_ map[string][]string, err error) {
	defer wrapErr(&err, "list project secret names")
	var rows []struct {
		ProjectID string `db:"project_id"`
		Name      string `db:"name"`
	}
	if err := q.selectAll(ctx, &rows, `SELECT project_id, name FROM project_secrets
		WHERE project_id = ANY($1) ORDER BY project_id, name`, pq.Array(projectIDs)); err != nil {
		return nil, err
	}
	out := make(map[string][]string)
	for _, r := range rows {
		out[r.ProjectID] = append(out[r.ProjectID], r.Name)
	}
	return out, nil
}

// PutProjectSecret inserts or replaces by the primary key, setting s.CreatedAt to the
// row's; xmax is 0 on a row this statement inserted, which tells the two apart in one
// round trip.
func (q queries) PutProjectSecret(ctx context.Context, s *core.ProjectSecret) (_ bool, err error) {
	defer wrapErr(&err, "put project secret")
	var r struct {
		CreatedAt time.Time `db:"created_at"`
		Created   bool      `db:"created"`
	}
	err = q.get(ctx, &r, `INSERT INTO project_secrets (project_id, name, value_sealed, agent, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (project_id, name) DO UPDATE SET value_sealed = EXCLUDED.value_sealed, agent = EXCLUDED.agent,
			updated_at = EXCLUDED.updated_at
		RETURNING created_at, xmax = 0 AS created`, s.ProjectID, s.Name, s.SealedValue, s.Agent, s.UpdatedAt)
	if err == nil {
		s.CreatedAt = r.CreatedAt
	}
	return r.Created, err
}

// DeleteProjectSecret deletes by the primary key.
func (q queries) DeleteProjectSecret(ctx context.Context, projectID, name string) (_ bool, err error) {
	defer wrapErr(&err, "delete project secret")
	n, err := q.exec(ctx, `DELETE FROM project_secrets WHERE project_id = $1 AND name = $2`, projectID, name)
	return n > 0, err
}
