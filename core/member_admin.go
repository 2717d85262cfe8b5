package core

import (
	"context"
	"errors"
	"time"
)

// The operator's member commands: `wshub admin member add|remove|list` name an
// account's first owner; owners manage the rest in the app.

const maxMemberName = 200

// AddMember gives the person an identity names a role in the account: the member is
// made, with that identity, when the hub does not know them yet, and a member already
// in the account changes role. name, when given, is the member's display name.
func (s *Admin) AddMember(ctx context.Context, accountID string, id Identity, role Role, name string) (*Membership, error) {
	if chars(name) > maxMemberName {
		return nil, Errorf(CodeInvalidRequest, "the name must be at most %d characters", maxMemberName)
	}
	var out *Membership
	err := inTx(ctx, s.store, func(q Queries) error {
		if _, err := q.GetAccount(ctx, accountID); err != nil {
			return notFound(err, CodeNotFound, "no account "+accountID)
		}
		now := s.clock.Now()
		m, err := q.MemberByIdentity(ctx, id)
		switch {
		case errors.Is(err, ErrNoRows):
			m = &Member{ID: NewID(s.rand, PrefixMember), Name: name, Identities: []Identity{id}, CreatedAt: now}
			if err := q.CreateMember(ctx, m); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		out = &Membership{AccountID: accountID, Member: m, Role: role, CreatedAt: now}
		if err := q.SetMembership(ctx, out); err != nil {
			return err
		}
		return operatorAudit(ctx, q, accountID, now, AuditMemberAdded, m.ID, id.String()+" as "+string(role))
	})
	return out, err
}

// RemoveMember takes the person an identity names out of the account. The member
// stays known to the hub (and in their other accounts).
func (s *Admin) RemoveMember(ctx context.Context, accountID string, id Identity) error {
	return s.store.InTx(ctx, func(q Queries) error {
		m, err := q.MemberByIdentity(ctx, id)
		if err != nil {
			return notFound(err, CodeNotFound, "no member with the identity "+id.String())
		}
		ok, err := q.RemoveMembership(ctx, accountID, m.ID)
		if err == nil && !ok {
			return Errorf(CodeNotFound, "%s is not a member of account %s", id, accountID)
		}
		if err != nil {
			return err
		}
		return operatorAudit(ctx, q, accountID, s.clock.Now(), AuditMemberRemoved, m.ID, id.String())
	})
}

// accountMember is the membership in the account of the member an identity names.
func accountMember(ctx context.Context, q Queries, accountID string, id Identity) (*Membership, error) {
	if _, err := q.GetAccount(ctx, accountID); err != nil {
		return nil, notFound(err, CodeNotFound, "no account "+accountID)
	}
	m, err := q.MemberByIdentity(ctx, id)
	if err != nil {
		return nil, notFound(err, CodeNotFound, "no member with the identity "+id.String())
	}
	ms, err := q.MembershipsOf(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, x := range ms {
		if x.AccountID == accountID {
			x.Member = m
			return x, nil
		}
	}
	return nil, Errorf(CodeNotFound, "%s is not a member of account %s: add them first (wshub admin member add)", id, accountID)
}

// SignInLinkGrant is a one-time sign-in link's token and its end.
type SignInLinkGrant struct {
	Token    string
	MemberID string
	Expires  time.Time
}

// SignInLink makes a one-time link token that signs a member of the account, named
// by one of their identities, in to it within SignInLinkLife: the development hub
// prints one for its owner, and an operator gets an owner back into the app (or in
// for the first time) with `wshub admin member signin-link`. Only a member of the
// account gets one; the audit log keeps that one was made, never the token.
func (s *Admin) SignInLink(ctx context.Context, accountID string, id Identity) (*SignInLinkGrant, error) {
	var out *SignInLinkGrant
	err := s.store.InTx(ctx, func(q Queries) error {
		ms, err := accountMember(ctx, q, accountID, id)
		if err != nil {
			return err
		}
		m, now := ms.Member, s.clock.Now()
		out = &SignInLinkGrant{Token: NewSessionToken(s.rand), MemberID: m.ID, Expires: now.Add(SignInLinkLife)}
		if err := q.InsertSignInLink(ctx, HashAPIKey(out.Token), m.ID, accountID, out.Expires); err != nil {
			return err
		}
		return operatorAudit(ctx, q, accountID, now, AuditSignInLink, m.ID, id.String())
	})
	return out, err
}

// ListMembers lists an account's members, owners first.
func (s *Admin) ListMembers(ctx context.Context, accountID string) ([]*Membership, error) {
	if _, err := s.store.GetAccount(ctx, accountID); err != nil {
		return nil, notFound(err, CodeNotFound, "no account "+accountID)
	}
	return s.store.ListMemberships(ctx, accountID)
}
