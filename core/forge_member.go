package core

import (
	"context"
	"errors"
)

// LinkForgeLogin links a forge login (an IdentityGitHub, IdentityGitLab or
// IdentityGitea: the person's profile page) to a member of the account, named by one
// of their identities (operator): what the login asks on the forge is then the
// member's, and the turn's commit names them as co-author, as a chat identity linked
// by signing in does. The hub signs no one in with a forge, so the operator says who
// the login is. A login already another member's is refused; linking it again is
// harmless.
func (s *ForgeAdmin) LinkForgeLogin(ctx context.Context, accountID string, member, link Identity) (*Membership, error) {
	if !ValidForge(link.Kind) {
		return nil, Errorf(CodeInvalidRequest, "%s is not a forge identity", link)
	}
	var out *Membership
	err := s.store.InTx(ctx, func(q Queries) error {
		m, err := accountMember(ctx, q, accountID, member)
		if err != nil {
			return err
		}
		switch other, err := q.MemberByIdentity(ctx, link); {
		case err == nil && other.ID == m.Member.ID:
			out = m
			return nil
		case err == nil:
			return Errorf(CodeInvalidRequest, "%s is another member's identity", link)
		case !errors.Is(err, ErrNoRows):
			return err
		}
		if err := q.AddIdentity(ctx, m.Member.ID, link); err != nil {
			return err
		}
		m.Member.Identities = append(m.Member.Identities, link)
		out = m
		return operatorAudit(ctx, q, accountID, s.clock.Now(), AuditMemberLinked, m.Member.ID, link.String())
	})
	return out, err
}
