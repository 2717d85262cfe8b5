package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// PutGitHubApp writes the App and replaces its installations in one statement; an
// installation another account holds violates the key (ErrConflict).
func (q queries) PutGitHubApp(ctx context.Context, a *core.GitHubApp) (err error) {
	defer wrapErr(&err, "put github app")
	ids := a.Installations
	if ids == nil {
		ids = []int64{}
	}
	_, err = q.exec(ctx, `WITH app AS (
			INSERT INTO account_github_apps (account_id, app_id, secret_sealed, updated_at, key_sealed) VALUES ($1, $2, $3, $4, $6)
			ON CONFLICT (account_id) DO UPDATE SET app_id = EXCLUDED.app_id, secret_sealed = EXCLUDED.secret_sealed,
				updated_at = EXCLUDED.updated_at, key_sealed = EXCLUDED.key_sealed
			RETURNING account_id),
		gone AS (DELETE FROM github_app_installations WHERE account_id = $1 AND installation_id <> ALL($5))
		INSERT INTO github_app_installations (installation_id, account_id)
		SELECT i, app.account_id FROM app, unnest($5::bigint[]) AS i
		ON CONFLICT (installation_id) DO UPDATE SET account_id = EXCLUDED.account_id
			WHERE github_app_installations.account_id = EXCLUDED.account_id`,
		a.AccountID, a.AppID, a.SealedSecret, a.UpdatedAt, pq.Array(ids), nilIfEmpty(a.SealedKey))
	return err
}

func (q queries) GetGitHubApp(ctx context.Context, accountID string) (_ *core.GitHubApp, err error) {
	defer wrapErr(&err, "get github app")
	return q.githubApp(ctx, `a.account_id = $1`, accountID)
}

func (q queries) GitHubAppOfInstallation(ctx context.Context, installation int64) (_ *core.GitHubApp, err error) {
	defer wrapErr(&err, "github app of installation")
	return q.githubApp(ctx, `a.account_id = (SELECT account_id FROM github_app_installations WHERE installation_id = $1)`, installation)
}

func (q queries) githubApp(ctx context.Context, where string, arg any) (*core.GitHubApp, error) {
	var row struct {
		AccountID     string        `db:"account_id"`
		AppID         int64         `db:"app_id"`
		SecretSealed  []byte        `db:"secret_sealed"`
		KeySealed     []byte        `db:"key_sealed"`
		UpdatedAt     time.Time     `db:"updated_at"`
		Installations pq.Int64Array `db:"installations"`
	}
	if err := q.get(ctx, &row, `SELECT a.account_id, a.app_id, a.secret_sealed, a.key_sealed, a.updated_at,
		ARRAY(SELECT i.installation_id FROM github_app_installations i WHERE i.account_id = a.account_id ORDER BY 1) AS installations
		FROM account_github_apps a WHERE `+where, arg); err != nil {
		return nil, err
	}
	return &core.GitHubApp{AccountID: row.AccountID, AppID: row.AppID, SealedSecret: row.SecretSealed, SealedKey: row.KeySealed, UpdatedAt: row.UpdatedAt,
		Installations: row.Installations}, nil
}
