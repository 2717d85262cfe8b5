package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

func (q queries) InsertAppSession(ctx context.Context, s *core.StoredAppSession) (err error) {
	defer wrapErr(&err, "insert app session")
	_, err = q.exec(ctx, `INSERT INTO app_sessions (id, token_hash, member_id, account_id, csrf, created_at, last_seen_at, expires_at)
		VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, $7, $8)`,
		s.ID, s.TokenHash, s.Member.ID, s.AccountID, s.CSRF, s.CreatedAt, s.LastSeenAt, s.ExpiresAt)
	return err
}

// AppSessionByToken: every app request. One statement through app_sessions_token and
// the memberships key: a member taken out of the account has no session there. A
// session in no account (an invited person's, to answer) has no membership to find.
func (q queries) AppSessionByToken(ctx context.Context, tokenHash []byte) (_ *core.AppSession, err error) {
	defer wrapErr(&err, "app session by token")
	var r struct {
		memberRow
		SessionID  string    `db:"session_id"`
		AccountID  string    `db:"account_id"`
		Role       string    `db:"role"`
		CSRF       string    `db:"csrf"`
		Started    time.Time `db:"started_at"`
		LastSeenAt time.Time `db:"last_seen_at"`
		ExpiresAt  time.Time `db:"expires_at"`
	}
	if err := q.get(ctx, &r, `SELECT s.id AS session_id, COALESCE(s.account_id, '') AS account_id, COALESCE(ms.role, '') AS role, s.csrf,
		s.created_at AS started_at, s.last_seen_at, s.expires_at, m.id, m.name, m.created_at, `+memberIdentities+`
		FROM app_sessions s
		LEFT JOIN memberships ms ON ms.account_id = s.account_id AND ms.member_id = s.member_id
		JOIN members m ON m.id = s.member_id
		WHERE s.token_hash = $1 AND s.ended_at IS NULL AND (s.account_id IS NULL OR ms.member_id IS NOT NULL)`, tokenHash); err != nil {
		return nil, err
	}
	return &core.AppSession{ID: r.SessionID, Member: r.core(), AccountID: r.AccountID, Role: core.Role(r.Role), CSRF: r.CSRF,
		CreatedAt: r.Started, LastSeenAt: r.LastSeenAt, ExpiresAt: r.ExpiresAt}, nil
}

func (q queries) TouchAppSession(ctx context.Context, id string, at time.Time) (err error) {
	defer wrapErr(&err, "touch app session")
	_, err = q.exec(ctx, `UPDATE app_sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2`, id, at)
	return err
}

func (q queries) EndAppSession(ctx context.Context, id string, at time.Time) (err error) {
	defer wrapErr(&err, "end app session")
	_, err = q.exec(ctx, `UPDATE app_sessions SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL`, id, at)
	return err
}

// MembershipsOf: a sign-in's accounts, through memberships_member.
func (q queries) MembershipsOf(ctx context.Context, memberID string) (_ []*core.Membership, err error) {
	defer wrapErr(&err, "memberships of")
	var rows []struct {
		memberRow
		AccountID   string    `db:"account_id"`
		AccountName string    `db:"account_name"`
		Role        string    `db:"role"`
		JoinedAt    time.Time `db:"joined_at"`
	}
	if err := q.selectAll(ctx, &rows, `SELECT ms.account_id, a.name AS account_name, ms.role, ms.created_at AS joined_at,
		m.id, m.name, m.created_at, `+memberIdentities+`
		FROM memberships ms JOIN members m ON m.id = ms.member_id JOIN accounts a ON a.id = ms.account_id
		WHERE ms.member_id = $1 ORDER BY ms.role = 'owner' DESC, ms.created_at, ms.account_id`, memberID); err != nil {
		return nil, err
	}
	out := make([]*core.Membership, len(rows))
	for i := range rows {
		out[i] = &core.Membership{AccountID: rows[i].AccountID, AccountName: rows[i].AccountName, Member: rows[i].core(),
			Role: core.Role(rows[i].Role), CreatedAt: rows[i].JoinedAt}
	}
	return out, nil
}

func (q queries) AddIdentity(ctx context.Context, memberID string, id core.Identity) (err error) {
	defer wrapErr(&err, "add identity")
	_, err = q.exec(ctx, `INSERT INTO member_identities (kind, subject, member_id) VALUES ($1, $2, $3)`, id.Kind, id.Subject, memberID)
	return err
}

func (q queries) InsertSignInLink(ctx context.Context, tokenHash []byte, memberID, accountID string, expires time.Time) (err error) {
	defer wrapErr(&err, "insert sign-in link")
	_, err = q.exec(ctx, `INSERT INTO app_signin_links (token_hash, member_id, account_id, expires_at) VALUES ($1, $2, $3, $4)`,
		tokenHash, memberID, accountID, expires)
	return err
}

// UseSignInLink takes the link once: the UPDATE's condition is the race's referee.
func (q queries) UseSignInLink(ctx context.Context, tokenHash []byte, at time.Time) (memberID, accountID string, err error) {
	defer wrapErr(&err, "use sign-in link")
	var r struct {
		MemberID  string `db:"member_id"`
		AccountID string `db:"account_id"`
	}
	err = q.get(ctx, &r, `UPDATE app_signin_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
		RETURNING member_id, account_id`, tokenHash, at)
	return r.MemberID, r.AccountID, err
}

// EndMemberSessions: an owner's "end sessions", and a member's removal.
func (q queries) EndMemberSessions(ctx context.Context, accountID, memberID string, at time.Time) (_ int64, err error) {
	defer wrapErr(&err, "end member sessions")
	return q.exec(ctx, `UPDATE app_sessions SET ended_at = $3 WHERE member_id = $2 AND account_id = $1 AND ended_at IS NULL`,
		accountID, memberID, at)
}

func (q queries) SetSessionAccount(ctx context.Context, sessionID, accountID string) (err error) {
	defer wrapErr(&err, "set session account")
	_, err = q.exec(ctx, `UPDATE app_sessions SET account_id = $2 WHERE id = $1`, sessionID, accountID)
	return err
}
