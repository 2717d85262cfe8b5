package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"
	"github.com/wshub/wshub/core"
)

type memberRow struct {
	ID        string         `db:"id"`
	Name      string         `db:"name"`
	CreatedAt time.Time      `db:"created_at"`
	Kinds     pq.StringArray `db:"kinds"`
	Subjects  pq.StringArray `db:"subjects"`
}

func (r *memberRow) core() *core.Member {
	m := &core.Member{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, Identities: make([]core.Identity, len(r.Kinds))}
	for i := range r.Kinds {
		m.Identities[i] = core.Identity{Kind: r.Kinds[i], Subject: r.Subjects[i]}
	}
	return m
}

// memberIdentities aggregates a member's identities in one row, in a stable order.
const memberIdentities = `ARRAY(SELECT kind FROM member_identities i WHERE i.member_id = m.id ORDER BY kind, subject) AS kinds,
	ARRAY(SELECT subject FROM member_identities i WHERE i.member_id = m.id ORDER BY kind, subject) AS subjects`

// MemberByIdentity: a sign-in's lookup, by the identities' primary key.
func (q queries) MemberByIdentity(ctx context.Context, id core.Identity) (_ *core.Member, err error) {
	defer wrapErr(&err, "member by identity")
	var r memberRow
	if err := q.get(ctx, &r, `SELECT m.id, m.name, m.created_at, `+memberIdentities+`
		FROM member_identities x JOIN members m ON m.id = x.member_id WHERE x.kind = $1 AND x.subject = $2`,
		id.Kind, id.Subject); err != nil {
		return nil, err
	}
	return r.core(), nil
}

// GetMember reads a member by its primary key.
func (q queries) GetMember(ctx context.Context, id string) (_ *core.Member, err error) {
	defer wrapErr(&err, "get member")
	var r memberRow
	if err := q.get(ctx, &r, `SELECT m.id, m.name, m.created_at, `+memberIdentities+` FROM members m WHERE m.id = $1`, id); err != nil {
		return nil, err
	}
	return r.core(), nil
}

func (q queries) CreateMember(ctx context.Context, m *core.Member) (err error) {
	defer wrapErr(&err, "create member")
	kinds, subjects := make([]string, len(m.Identities)), make([]string, len(m.Identities))
	for i, id := range m.Identities {
		kinds[i], subjects[i] = id.Kind, id.Subject
	}
	// One statement: the member and its identities, or neither.
	_, err = q.exec(ctx, `WITH m AS (INSERT INTO members (id, name, created_at) VALUES ($1, $2, $3) RETURNING id)
		INSERT INTO member_identities (kind, subject, member_id)
		SELECT k, s, m.id FROM m, unnest($4::text[], $5::text[]) AS x(k, s)`,
		m.ID, m.Name, m.CreatedAt, pq.StringArray(kinds), pq.StringArray(subjects))
	return err
}

func (q queries) SetMembership(ctx context.Context, ms *core.Membership) (err error) {
	defer wrapErr(&err, "set membership")
	_, err = q.exec(ctx, `INSERT INTO memberships (account_id, member_id, role, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_id, member_id) DO UPDATE SET role = EXCLUDED.role`,
		ms.AccountID, ms.Member.ID, string(ms.Role), ms.CreatedAt)
	return err
}

func (q queries) RemoveMembership(ctx context.Context, accountID, memberID string) (_ bool, err error) {
	defer wrapErr(&err, "remove membership")
	n, err := q.exec(ctx, `DELETE FROM memberships WHERE account_id = $1 AND member_id = $2`, accountID, memberID)
	return n == 1, err
}

// ListMemberships reads an account's members by the primary key's leading column.
func (q queries) ListMemberships(ctx context.Context, accountID string) (_ []*core.Membership, err error) {
	defer wrapErr(&err, "list memberships")
	var rows []struct {
		memberRow
		Role     string    `db:"role"`
		JoinedAt time.Time `db:"joined_at"`
	}
	if err := q.selectAll(ctx, &rows, `SELECT m.id, m.name, m.created_at, `+memberIdentities+`, ms.role, ms.created_at AS joined_at
		FROM memberships ms JOIN members m ON m.id = ms.member_id
		WHERE ms.account_id = $1 ORDER BY ms.role = 'owner' DESC, ms.created_at, m.id`, accountID); err != nil {
		return nil, err
	}
	out := make([]*core.Membership, len(rows))
	for i := range rows {
		out[i] = &core.Membership{AccountID: accountID, Member: rows[i].core(), Role: core.Role(rows[i].Role), CreatedAt: rows[i].JoinedAt}
	}
	return out, nil
}
