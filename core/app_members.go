package core

import (
	"context"
)

// An account's people, as its owners manage them in the app. Every change is in the
// audit log, and an account always keeps an owner.

// ListMembers lists the account's members, owners first (owners).
func (s *App) ListMembers(ctx context.Context, a *AppSession) ([]*Membership, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	return s.store.ListMemberships(ctx, a.AccountID)
}

// SetRole changes a member's role in the account (owners).
func (s *App) SetRole(ctx context.Context, a *AppSession, memberID string, role Role) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	return inTx(ctx, s.store, func(q Queries) error {
		list, err := lockedMembers(ctx, q, a.AccountID)
		if err != nil {
			return err
		}
		ms, err := memberIn(list, memberID)
		if err != nil || ms.Role == role {
			return err
		}
		if err := keepAnOwner(list, memberID, role); err != nil {
			return err
		}
		ms.Role = role
		if err := q.SetMembership(ctx, ms); err != nil {
			return err
		}
		return a.audit(ctx, q, s.clock.Now(), AuditMemberRole, memberID, string(role))
	})
}

// RemoveMember takes a member out of the account (owners); their sessions there end
// with it.
func (s *App) RemoveMember(ctx context.Context, a *AppSession, memberID string) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	return inTx(ctx, s.store, func(q Queries) error {
		list, err := lockedMembers(ctx, q, a.AccountID)
		if err != nil {
			return err
		}
		if _, err := memberIn(list, memberID); err != nil {
			return err
		}
		if err := keepAnOwner(list, memberID, ""); err != nil {
			return err
		}
		now := s.clock.Now()
		if _, err := q.RemoveMembership(ctx, a.AccountID, memberID); err != nil {
			return err
		}
		if _, err := q.EndMemberSessions(ctx, a.AccountID, memberID, now); err != nil {
			return err
		}
		return a.audit(ctx, q, now, AuditMemberRemoved, memberID, "")
	})
}

// EndSessions signs a member out of the account everywhere (owners).
func (s *App) EndSessions(ctx context.Context, a *AppSession, memberID string) (int64, error) {
	if err := a.requireOwner(); err != nil {
		return 0, err
	}
	var n int64
	err := s.store.InTx(ctx, func(q Queries) error {
		list, err := lockedMembers(ctx, q, a.AccountID)
		if err != nil {
			return err
		}
		if _, err := memberIn(list, memberID); err != nil {
			return err
		}
		now := s.clock.Now()
		if n, err = q.EndMemberSessions(ctx, a.AccountID, memberID, now); err != nil {
			return err
		}
		return a.audit(ctx, q, now, AuditSessionsEnded, memberID, "")
	})
	return n, err
}

// lockedMembers reads the account's members under the account's row lock, so that the
// last-owner rule holds against a concurrent change.
func lockedMembers(ctx context.Context, q Queries, accountID string) ([]*Membership, error) {
	if err := q.LockAccount(ctx, accountID); err != nil {
		return nil, err
	}
	return q.ListMemberships(ctx, accountID)
}

// memberIn finds a member in the account's list.
func memberIn(list []*Membership, memberID string) (*Membership, error) {
	for _, ms := range list {
		if ms.Member.ID == memberID {
			return ms, nil
		}
	}
	return nil, Errorf(CodeNotFound, "no member %s in this account", memberID)
}

// keepAnOwner refuses a change that would leave the account without an owner: the
// member memberID becoming role ("": leaving).
func keepAnOwner(list []*Membership, memberID string, role Role) error {
	if role == RoleOwner {
		return nil
	}
	for _, ms := range list {
		if ms.Role == RoleOwner && ms.Member.ID != memberID {
			return nil
		}
	}
	for _, ms := range list {
		if ms.Member.ID == memberID && ms.Role == RoleOwner {
			return Errorf(CodeInvalidRequest, "an account keeps at least one owner: make someone else owner first")
		}
	}
	return nil
}

// AuditLog reads the account's audit log, newest first, before an entry id (0: from
// the newest), a page at a time (owners).
func (s *App) AuditLog(ctx context.Context, a *AppSession, before int64, limit int) ([]*AuditEntry, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > maxAuditPage {
		limit = defaultAuditPageSize
	}
	return s.store.ListAudit(ctx, a.AccountID, before, limit)
}

// Accounts lists the accounts the session's person belongs to (the switcher).
func (s *App) Accounts(ctx context.Context, a *AppSession) ([]*Membership, error) {
	return s.store.MembershipsOf(ctx, a.Member.ID)
}

// SwitchAccount moves the session to another of its person's accounts.
func (s *App) SwitchAccount(ctx context.Context, a *AppSession, accountID string) error {
	list, err := s.store.MembershipsOf(ctx, a.Member.ID)
	if err != nil {
		return err
	}
	for _, ms := range list {
		if ms.AccountID == accountID {
			return s.store.SetSessionAccount(ctx, a.ID, accountID)
		}
	}
	return Errorf(CodeNotFound, "you are not a member of account %s", accountID)
}
