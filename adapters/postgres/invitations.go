package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type invitationRow struct {
	ID            string    `db:"id"`
	AccountID     string    `db:"account_id"`
	AccountName   string    `db:"account_name"`
	Email         string    `db:"email"`
	Role          string    `db:"role"`
	InvitedBy     string    `db:"invited_by"`
	InvitedByName string    `db:"invited_by_name"`
	CreatedAt     time.Time `db:"created_at"`
}

func (r *invitationRow) core() *core.Invitation {
	return &core.Invitation{ID: r.ID, AccountID: r.AccountID, AccountName: r.AccountName, Email: r.Email, Role: core.Role(r.Role),
		InvitedBy: r.InvitedBy, InvitedByName: r.InvitedByName, CreatedAt: r.CreatedAt}
}

// invitationColumns read an invitation i with its account a's and inviter's names.
const invitationColumns = `i.id, i.account_id, a.name AS account_name, i.email, i.role, i.invited_by,
	COALESCE((SELECT m.name FROM members m WHERE m.id = i.invited_by), '') AS invited_by_name, i.created_at`

func (q queries) invitations(ctx context.Context, where string, args ...any) (_ []*core.Invitation, err error) {
	var rows []invitationRow
	if err := q.selectAll(ctx, &rows, `SELECT `+invitationColumns+` FROM invitations i JOIN accounts a ON a.id = i.account_id `+where, args...); err != nil {
		return nil, err
	}
	out := make([]*core.Invitation, len(rows))
	for i := range rows {
		out[i] = rows[i].core()
	}
	return out, nil
}

// PutInvitation: an account's invitation of an address is one row, by its unique key.
func (q queries) PutInvitation(ctx context.Context, inv *core.Invitation) (err error) {
	defer wrapErr(&err, "put invitation")
	return q.get(ctx, &inv.ID, `INSERT INTO invitations (id, account_id, email, role, invited_by, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (account_id, email) DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by, created_at = EXCLUDED.created_at
		RETURNING id`, inv.ID, inv.AccountID, inv.Email, string(inv.Role), inv.InvitedBy, inv.CreatedAt)
}

// ListInvitations: the members page, by the unique key's leading column.
func (q queries) ListInvitations(ctx context.Context, accountID string) (_ []*core.Invitation, err error) {
	defer wrapErr(&err, "list invitations")
	return q.invitations(ctx, `WHERE i.account_id = $1 ORDER BY i.created_at DESC, i.id`, accountID)
}

// InvitationsFor: a sign-in and the invitations page, through invitations_email.
func (q queries) InvitationsFor(ctx context.Context, emails []string) (_ []*core.Invitation, err error) {
	defer wrapErr(&err, "invitations for")
	return q.invitations(ctx, `WHERE i.email = ANY($1) ORDER BY i.created_at, i.id`, pq.StringArray(emails))
}

// TakeInvitation: an answer, by the primary key; the DELETE is the race's referee.
func (q queries) TakeInvitation(ctx context.Context, id string, emails []string) (_ *core.Invitation, err error) {
	defer wrapErr(&err, "take invitation")
	var r invitationRow
	if err := q.get(ctx, &r, `WITH i AS (DELETE FROM invitations WHERE id = $1 AND email = ANY($2) RETURNING *)
		SELECT `+invitationColumns+` FROM i JOIN accounts a ON a.id = i.account_id`, id, pq.StringArray(emails)); err != nil {
		return nil, err
	}
	return r.core(), nil
}

// DeleteInvitation: an owner's withdrawal, by the primary key.
func (q queries) DeleteInvitation(ctx context.Context, accountID, id string) (_ bool, err error) {
	defer wrapErr(&err, "delete invitation")
	n, err := q.exec(ctx, `DELETE FROM invitations WHERE id = $1 AND account_id = $2`, id, accountID)
	return n == 1, err
}
