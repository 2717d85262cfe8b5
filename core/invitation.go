package core

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Invitation is an owner's invitation of an email address to an account. It is
// pending until the person with that address signs in and accepts or declines it: until
// then the account knows the address only, and no member is made, linked or shown for
// it (the person may well be another account's).
type Invitation struct {
	ID        string
	AccountID string
	// AccountName is the account's name, for the invited person.
	AccountName string
	Email       string
	Role        Role
	// InvitedBy is the inviting member's id, InvitedByName their name.
	InvitedBy     string
	InvitedByName string
	CreatedAt     time.Time
}

// InvitationQueries are the store statements of invitations.
type InvitationQueries interface {
	// PutInvitation inserts an invitation, or renews the account's pending one for the
	// same address (its role, inviter and time); inv.ID becomes the stored one's.
	PutInvitation(ctx context.Context, inv *Invitation) error
	// ListInvitations lists an account's pending invitations, newest first.
	ListInvitations(ctx context.Context, accountID string) ([]*Invitation, error)
	// InvitationsFor lists the pending invitations of these addresses, with their
	// accounts' and inviters' names, oldest first.
	InvitationsFor(ctx context.Context, emails []string) ([]*Invitation, error)
	// TakeInvitation deletes and returns the invitation id when it is one of these
	// addresses' (ErrNoRows: none such).
	TakeInvitation(ctx context.Context, id string, emails []string) (*Invitation, error)
	// DeleteInvitation deletes one of an account's invitations; false when there was none.
	DeleteInvitation(ctx context.Context, accountID, id string) (bool, error)
}

// InviteMember invites the person with this email to the account with a role
// (owners). Nothing about a person the hub may know by that address is looked up or
// shown: they join when they sign in with a provider that vouches for the address and
// accept.
func (s *App) InviteMember(ctx context.Context, a *AppSession, email string, role Role) (*Invitation, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	id, err := NewIdentity(IdentityEmail, email)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	inv := &Invitation{ID: NewID(s.rand, PrefixInvitation), AccountID: a.AccountID, Email: id.Subject, Role: role,
		InvitedBy: a.Member.ID, CreatedAt: now}
	err = inTx(ctx, s.store, func(q Queries) error {
		if err := q.PutInvitation(ctx, inv); err != nil {
			return err
		}
		return a.audit(ctx, q, now, AuditMemberInvited, inv.ID, inv.Email+" as "+string(role))
	})
	return inv, err
}

// ListInvitations lists the account's pending invitations (owners).
func (s *App) ListInvitations(ctx context.Context, a *AppSession) ([]*Invitation, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	return s.store.ListInvitations(ctx, a.AccountID)
}

// WithdrawInvitation deletes one of the account's pending invitations (owners).
func (s *App) WithdrawInvitation(ctx context.Context, a *AppSession, id string) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	return inTx(ctx, s.store, func(q Queries) error {
		ok, err := q.DeleteInvitation(ctx, a.AccountID, id)
		if err == nil && !ok {
			return Errorf(CodeNotFound, "no pending invitation %s in this account", id)
		}
		if err != nil {
			return err
		}
		return a.audit(ctx, q, s.clock.Now(), AuditInvitationWithdrawn, id, "")
	})
}

// MyInvitations lists the invitations to the signed-in person's email addresses.
func (s *App) MyInvitations(ctx context.Context, a *AppSession) ([]*Invitation, error) {
	emails := emailsOf(a.Member)
	if len(emails) == 0 {
		return nil, nil
	}
	return s.store.InvitationsFor(ctx, emails)
}

// AnswerInvitation accepts or declines an invitation to one of the signed-in person's
// addresses. Accepting makes them a member of its account with its role (one already
// there keeps theirs) and moves the session there; either answer is in that account's
// audit log, a decline by the address only.
func (s *App) AnswerInvitation(ctx context.Context, a *AppSession, id string, accept bool) (*Invitation, error) {
	var inv *Invitation
	err := inTx(ctx, s.store, func(q Queries) error {
		var err error
		inv, err = q.TakeInvitation(ctx, id, emailsOf(a.Member))
		if err != nil {
			return notFound(err, CodeNotFound, "no pending invitation "+id+" for you")
		}
		now := s.clock.Now()
		if !accept {
			// Logged by the address alone: one who declines stays unknown to the account.
			invitee := actor{id: "invitee", name: inv.Email}
			return invitee.audit(ctx, q, inv.AccountID, now, AuditInvitationDeclined, inv.ID, "")
		}
		mine, err := q.MembershipsOf(ctx, a.Member.ID)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(mine, func(ms *Membership) bool { return ms.AccountID == inv.AccountID }) {
			if err := q.SetMembership(ctx, &Membership{AccountID: inv.AccountID, Member: a.Member, Role: inv.Role, CreatedAt: now}); err != nil {
				return err
			}
		}
		if err := q.SetSessionAccount(ctx, a.ID, inv.AccountID); err != nil {
			return err
		}
		return a.actor().audit(ctx, q, inv.AccountID, now, AuditMemberAdded, a.Member.ID, inv.Email+" as "+string(inv.Role)+", invited")
	})
	return inv, err
}

func emailsOf(m *Member) []string {
	var out []string
	for _, id := range m.Identities {
		if id.Kind == IdentityEmail {
			out = append(out, id.Subject)
		}
	}
	return out
}

// invitedEmail is the verified address a person signs in with, when invitations wait
// for it and no member has it yet: the sign-in links it to the person's member (made
// then when the hub does not know them), their own act, so that they can answer. ok is
// false when no invitation waits, or the address is a member's already.
func invitedEmail(ctx context.Context, q Queries, verified string) (Identity, bool, error) {
	if verified == "" {
		return Identity{}, false, nil
	}
	email, err := NewIdentity(IdentityEmail, verified)
	if err != nil {
		return Identity{}, false, nil
	}
	pending, err := q.InvitationsFor(ctx, []string{email.Subject})
	if err != nil || len(pending) == 0 {
		return Identity{}, false, err
	}
	_, err = q.MemberByIdentity(ctx, email)
	switch {
	case err == nil:
		return Identity{}, false, nil // the address is a member's already: found by it
	case !errors.Is(err, ErrNoRows):
		return Identity{}, false, err
	}
	return email, true, nil
}
