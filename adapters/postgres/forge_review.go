package postgres

import (
	"context"

	"github.com/wshub/wshub/core"
)

func (q queries) AddForgeReviewThread(ctx context.Context, t *core.ForgeReviewThread) (err error) {
	defer wrapErr(&err, "add forge review thread")
	_, err = q.exec(ctx, `INSERT INTO forge_review_threads (turn_id, project_id, pull_number, thread, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, t.TurnID, t.ProjectID, t.Pull, t.Thread, t.CreatedAt)
	return err
}

func (q queries) ForgeReviewThreadOf(ctx context.Context, turnID string) (_ *core.ForgeReviewThread, err error) {
	defer wrapErr(&err, "forge review thread of")
	t := &core.ForgeReviewThread{TurnID: turnID}
	err = q.queryRow(ctx, `SELECT project_id, pull_number, thread, created_at FROM forge_review_threads WHERE turn_id = $1`,
		turnID).Scan(&t.ProjectID, &t.Pull, &t.Thread, &t.CreatedAt)
	if err != nil {
		return nil, mapErr(err)
	}
	return t, nil
}
