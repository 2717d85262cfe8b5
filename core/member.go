package core

import (
	"context"
	"net/url"
	"strings"
	"time"
)

// Member is a person who uses the hub: in the app, and linked to their chat
// identities. A member belongs to accounts, each with a role.
type Member struct {
	ID         string
	Name       string
	Identities []Identity
	CreatedAt  time.Time
}

// Role is what a member may do in an account: owners manage its keys, webhooks and
// members; members see and use its workspaces.
type Role string

const (
	RoleOwner  Role = "owner"
	RoleMember Role = "member"
)

// ParseRole reads a role's wire name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleOwner, RoleMember:
		return r, nil
	}
	return "", Errorf(CodeInvalidRequest, "role must be %q or %q", RoleOwner, RoleMember)
}

// Membership is a member's place in an account.
type Membership struct {
	AccountID string
	// AccountName is the account's name (read for the app's account switcher).
	AccountName string
	Member      *Member
	Role        Role
	CreatedAt   time.Time
}

// Identity kinds: how a person is recognised when they sign in.
const (
	IdentityEmail   = "email"   // an address, lowercased
	IdentityOIDC    = "oidc"    // "issuer sub": an OpenID Connect provider's subject
	IdentitySlack   = "slack"   // "team:user"
	IdentityDiscord = "discord" // a user id
	// A forge's person: their profile page's URL, lowercased (the three forges' logins
	// are case-insensitive), e.g. "https://github.com/octocat".
	IdentityGitHub = "github"
	IdentityGitLab = "gitlab"
	IdentityGitea  = "gitea"
)

// Identity is one way a member is recognised: a kind and its subject (normalised).
type Identity struct {
	Kind    string
	Subject string
}

func (i Identity) String() string { return i.Kind + ":" + i.Subject }

const maxIdentity = 512

// NewIdentity checks and normalises an identity given as the operator writes it:
// an email address; an OpenID Connect issuer URL and subject joined by the last ':'
// (a subject holding ':' is not supported); a Slack team and user id joined by ':';
// a Discord user id.
func NewIdentity(kind, value string) (Identity, error) {
	v := strings.TrimSpace(value)
	bad := func(format string, args ...any) (Identity, error) {
		return Identity{}, Errorf(CodeInvalidRequest, format, args...)
	}
	if v == "" || len(v) > maxIdentity {
		return bad("the %s identity must be 1 to %d characters", kind, maxIdentity)
	}
	switch kind {
	case IdentityEmail:
		at := strings.LastIndexByte(v, '@')
		if at <= 0 || at == len(v)-1 || strings.ContainsAny(v, " \t<>,") {
			return bad("%q is not an email address", v)
		}
		return Identity{Kind: kind, Subject: strings.ToLower(v)}, nil
	case IdentityOIDC:
		cut := strings.LastIndexByte(v, ':')
		issuer, sub := v[:max(cut, 0)], v[cut+1:]
		u, err := url.Parse(issuer)
		if cut < 0 || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || sub == "" {
			return bad("an OpenID Connect identity is ISSUER:SUBJECT, the issuer's URL and the subject: got %q", v)
		}
		return Identity{Kind: kind, Subject: strings.TrimSuffix(issuer, "/") + " " + sub}, nil
	case IdentitySlack:
		team, user, ok := strings.Cut(v, ":")
		if !ok || !slackID(team) || !slackID(user) {
			return bad("a Slack identity is TEAM:USER, two Slack ids (T…:U…): got %q", v)
		}
		return Identity{Kind: kind, Subject: team + ":" + user}, nil
	case IdentityDiscord:
		if !snowflake(v) {
			return bad("a Discord identity is a user id (digits): got %q", v)
		}
		return Identity{Kind: kind, Subject: v}, nil
	case IdentityGitHub, IdentityGitLab, IdentityGitea:
		u, err := url.Parse(strings.TrimSuffix(v, "/"))
		login := strings.TrimPrefix(u.EscapedPath(), "/")
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || login == "" || strings.Contains(login, "/") ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return bad("a %s identity is the person's profile page, https://HOST/LOGIN: got %q", kind, v)
		}
		return Identity{Kind: kind, Subject: strings.ToLower(u.Scheme + "://" + u.Host + "/" + login)}, nil
	}
	return bad("unknown identity kind %q", kind)
}

func slackID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// MemberQueries are the store statements of members and their accounts.
type MemberQueries interface {
	// MemberByIdentity finds the member an identity belongs to (ErrNoRows: none).
	MemberByIdentity(ctx context.Context, id Identity) (*Member, error)
	// GetMember reads a member with its identities (ErrNoRows: none).
	GetMember(ctx context.Context, id string) (*Member, error)
	// CreateMember inserts a member with its identities.
	CreateMember(ctx context.Context, m *Member) error
	// SetMembership inserts or changes a member's role in an account.
	SetMembership(ctx context.Context, ms *Membership) error
	// RemoveMembership takes a member out of an account; false when they were not in it.
	RemoveMembership(ctx context.Context, accountID, memberID string) (bool, error)
	// ListMemberships lists an account's members with their identities: owners first,
	// then by when they joined.
	ListMemberships(ctx context.Context, accountID string) ([]*Membership, error)
}
