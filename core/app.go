package core

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// The app (web/) is a front-end like the API and the bots: people sign in, and every
// page acts through an AppSession, its scope, as the API's is an account.

// AppSession is a person signed in to the app: the member, the account they are
// looking at, and their role there (AccountID "": in no account yet, with invitations
// to answer and nothing else to do).
type AppSession struct {
	ID        string
	Member    *Member
	AccountID string
	Role      Role
	// CSRF is the token every state-changing form of this session carries.
	CSRF       string
	CreatedAt  time.Time
	LastSeenAt time.Time
	// ExpiresAt is the absolute end; a session idle for AppLimits.Idle ends sooner.
	ExpiresAt time.Time
	// Address is where the request at hand came from, as the front-end saw it: the
	// audit log's "from where".
	Address string
}

// StoredAppSession is a session row: its token kept as a hash only.
type StoredAppSession struct {
	AppSession
	TokenHash []byte
}

// AppLimits are the app's session lifetimes.
type AppLimits struct {
	Idle time.Duration // since the last request (default DefaultAppIdle)
	Max  time.Duration // since sign-in (default DefaultAppMax)
}

const (
	DefaultAppIdle = 12 * time.Hour
	DefaultAppMax  = 7 * 24 * time.Hour
	// appTouchEvery spaces the writes of a session's last request: the idle limit is
	// kept to within it, and a page's requests cost no write.
	appTouchEvery = time.Minute
	// SignInLinkLife bounds a one-time sign-in link.
	SignInLinkLife = 15 * time.Minute
)

// App is the app's use cases: signing in, and each page's actions on the session's
// account.
type App struct {
	kernel
	store  appStore
	limits AppLimits
	// quotas are the hub's default limits per account (the keys, here).
	quotas Quotas
	// webhooks are the API's webhook use cases, which the app's pages share.
	webhooks *Webhooks
}

type appStore interface {
	TxStore
	AccountQueries
	MemberQueries
	InvitationQueries
	AppSessionQueries
	ChatQueries
	AuditQueries
	UsageQueries
	// WorkspacesByID names the workspaces of the delivery log's events.
	WorkspacesByID(ctx context.Context, accountID string, ids []string) ([]*Workspace, error)
}

// AppSessionQueries are the store statements of the app's sessions.
type AppSessionQueries interface {
	InsertAppSession(ctx context.Context, s *StoredAppSession) error
	// AppSessionByToken finds a session that has not ended with the member's current
	// role in its account (ErrNoRows: none, or the member left the account).
	AppSessionByToken(ctx context.Context, tokenHash []byte) (*AppSession, error)
	TouchAppSession(ctx context.Context, id string, at time.Time) error
	EndAppSession(ctx context.Context, id string, at time.Time) error
	// MembershipsOf lists a member's accounts, owner roles first.
	MembershipsOf(ctx context.Context, memberID string) ([]*Membership, error)
	// AddIdentity links another identity to a member (ErrConflict: another's).
	AddIdentity(ctx context.Context, memberID string, id Identity) error
	// EndMemberSessions ends a member's sessions in an account; it returns how many.
	EndMemberSessions(ctx context.Context, accountID, memberID string, at time.Time) (int64, error)
	// SetSessionAccount moves a session to another of its member's accounts.
	SetSessionAccount(ctx context.Context, sessionID, accountID string) error
	InsertSignInLink(ctx context.Context, tokenHash []byte, memberID, accountID string, expires time.Time) error
	// UseSignInLink marks an unused, unexpired link used and returns its member and
	// account (ErrNoRows: none such).
	UseSignInLink(ctx context.Context, tokenHash []byte, at time.Time) (memberID, accountID string, err error)
}

func (l AppLimits) idle() time.Duration {
	if l.Idle > 0 {
		return l.Idle
	}
	return DefaultAppIdle
}

func (l AppLimits) max() time.Duration {
	if l.Max > 0 {
		return l.Max
	}
	return DefaultAppMax
}

// SignInInput is a person an identity provider vouched for.
type SignInInput struct {
	Identity Identity
	// Email is an address the provider verified ("": none): it finds a member the
	// operator named by email, and links this identity to them.
	Email string
	Name  string
	// Discord, for a person Discord vouched for: their servers, and how to read their
	// roles in one (asked only of servers bound to an account, for the role gate).
	Discord *DiscordSignIn
}

// DiscordSignIn is what Discord's OAuth2 (identify, guilds, guilds.members.read)
// tells of a person signing in.
type DiscordSignIn struct {
	Guilds  []string
	RolesIn func(ctx context.Context, guildID string) ([]string, error)
}

var errNotAMember = Errorf(CodeNotAMember, "you are not a member of any account on this hub; an owner of your team's account can add you")

// SignIn opens a session for a person an identity provider vouched for, on the
// first of their accounts (owned ones first). It returns the session and the token
// its cookie carries, shown nowhere else. A person the hub does not know is refused,
// unless their Slack identity belongs to a team bound to an account: then they join
// it as a member. A person in no account whom an invitation waits for (by a verified
// address) is signed in with no account, to answer it.
func (s *App) SignIn(ctx context.Context, in SignInInput) (*AppSession, string, error) {
	out, token, err := s.signIn(ctx, in, nil, false)
	if !errors.Is(err, errNotAMember) {
		return out, token, err
	}
	// Not known: the person may belong to a bound team or server. Looked up outside any
	// transaction, since Discord may be asked for the person's roles.
	bound, err := s.boundAccounts(ctx, in)
	if err != nil {
		return nil, "", err
	}
	return s.signIn(ctx, in, bound, true)
}

// signIn opens the session in one transaction; bound, when given, are the accounts a
// person the hub does not know yet joins, and invited says such a person may be made a
// member (of no account yet) when an invitation waits for their address.
func (s *App) signIn(ctx context.Context, in SignInInput, bound []string, invited bool) (*AppSession, string, error) {
	var out *AppSession
	var token string
	err := inTx(ctx, s.store, func(q Queries) error {
		m, err := s.memberFor(ctx, q, in, bound, invited)
		if err != nil {
			return err
		}
		// The verified address invitations wait for becomes the member's, to answer them.
		email, ok, err := invitedEmail(ctx, q, in.Email)
		if err != nil {
			return err
		}
		if ok {
			if err := q.AddIdentity(ctx, m.ID, email); err != nil {
				return err
			}
			m.Identities = append(m.Identities, email)
		}
		ms, err := q.MembershipsOf(ctx, m.ID)
		if err != nil {
			return err
		}
		if len(ms) > 0 {
			out, token, err = s.open(ctx, q, m, ms[0])
			return err
		}
		pending, err := q.InvitationsFor(ctx, emailsOf(m))
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return errNotAMember
		}
		// In no account, with invitations: signed in to answer them, and only that.
		out, token, err = s.open(ctx, q, m, nil)
		return err
	})
	return out, token, err
}

// memberFor finds (or, for a bound team's person or an invited one, makes) the member
// signing in.
func (s *App) memberFor(ctx context.Context, q Queries, in SignInInput, bound []string, invited bool) (*Member, error) {
	m, err := q.MemberByIdentity(ctx, in.Identity)
	if !errors.Is(err, ErrNoRows) {
		return m, err
	}
	if in.Email != "" {
		if email, err := NewIdentity(IdentityEmail, in.Email); err == nil {
			m, err := q.MemberByIdentity(ctx, email)
			switch {
			case err == nil:
				return m, q.AddIdentity(ctx, m.ID, in.Identity)
			case !errors.Is(err, ErrNoRows):
				return nil, err
			}
		}
	}
	if len(bound) > 0 {
		return s.join(ctx, q, in, bound)
	}
	if invited {
		email, ok, err := invitedEmail(ctx, q, in.Email)
		if err != nil {
			return nil, err
		}
		if ok {
			return s.newMember(ctx, q, in, email)
		}
	}
	return nil, errNotAMember
}

// newMember makes the member signing in, known by their identity and any others given.
func (k kernel) newMember(ctx context.Context, q Queries, in SignInInput, more ...Identity) (*Member, error) {
	name, _ := capRunes(in.Name, maxMemberName)
	m := &Member{ID: NewID(k.rand, PrefixMember), Name: name, Identities: append([]Identity{in.Identity}, more...),
		CreatedAt: k.clock.Now()}
	return m, q.CreateMember(ctx, m)
}

// join makes a person of a bound Slack team, or of a bound Discord server whose role
// gate they pass, a member of the bound accounts.
func (k kernel) join(ctx context.Context, q Queries, in SignInInput, accounts []string) (*Member, error) {
	m, err := k.newMember(ctx, q, in)
	if err != nil {
		return nil, err
	}
	now := m.CreatedAt
	for _, acct := range accounts {
		if err := q.SetMembership(ctx, &Membership{AccountID: acct, Member: m, Role: RoleMember, CreatedAt: now}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// boundAccounts are the accounts the person's chat team or servers are bound to.
func (s *App) boundAccounts(ctx context.Context, in SignInInput) ([]string, error) {
	q := s.store
	switch {
	case in.Identity.Kind == IdentitySlack:
		team, _, _ := strings.Cut(in.Identity.Subject, ":")
		b, err := q.GetChatBinding(ctx, PlatformSlack, team)
		if errors.Is(err, ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []string{b.AccountID}, nil
	case in.Identity.Kind == IdentityDiscord && in.Discord != nil:
		var out []string
		for _, guild := range in.Discord.Guilds {
			b, err := q.GetChatBinding(ctx, PlatformDiscord, guild)
			if errors.Is(err, ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if len(b.Roles) > 0 {
				roles, err := in.Discord.RolesIn(ctx, guild)
				if err != nil {
					return nil, err
				}
				if !anyOf(roles, b.Roles) {
					continue // the binding's role gate
				}
			}
			if !slices.Contains(out, b.AccountID) {
				out = append(out, b.AccountID)
			}
		}
		return out, nil
	}
	return nil, nil
}

func anyOf(have, want []string) bool {
	for _, r := range have {
		if slices.Contains(want, r) {
			return true
		}
	}
	return false
}

// open starts a session of m in ms's account (ms nil: in no account, to answer
// invitations only).
func (s *App) open(ctx context.Context, q Queries, m *Member, ms *Membership) (*AppSession, string, error) {
	now := s.clock.Now()
	token := NewSessionToken(s.rand)
	st := &StoredAppSession{AppSession: AppSession{ID: NewID(s.rand, PrefixAppSession), Member: m,
		CSRF: encodeBase62(randomBytes(s.rand, 32)), CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(s.limits.max())}, TokenHash: HashAPIKey(token)}
	if ms != nil {
		st.AccountID, st.Role = ms.AccountID, ms.Role
	}
	if err := q.InsertAppSession(ctx, st); err != nil {
		return nil, "", err
	}
	return &st.AppSession, token, nil
}

// Session finds the session a cookie's token names: not ended, not past its absolute
// end, not idle too long, and its member still in the account (with their role now).
func (s *App) Session(ctx context.Context, token string) (*AppSession, error) {
	invalid := Errorf(CodeSessionInvalid, "sign in again")
	if token == "" || len(token) > 200 {
		return nil, invalid
	}
	a, err := s.store.AppSessionByToken(ctx, HashAPIKey(token))
	if errors.Is(err, ErrNoRows) {
		return nil, invalid
	}
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if !now.Before(a.ExpiresAt) || now.Sub(a.LastSeenAt) >= s.limits.idle() {
		return nil, invalid
	}
	if now.Sub(a.LastSeenAt) >= appTouchEvery {
		if err := s.store.TouchAppSession(ctx, a.ID, now); err != nil {
			return nil, err
		}
		a.LastSeenAt = now
	}
	return a, nil
}

// SignOut ends the session.
func (s *App) SignOut(ctx context.Context, a *AppSession) error {
	return s.store.EndAppSession(ctx, a.ID, s.clock.Now())
}

// SignInWithLink opens a session with a one-time link (the development hub prints
// one): it works once, before it expires.
func (s *App) SignInWithLink(ctx context.Context, token string) (*AppSession, string, error) {
	var out *AppSession
	var cookie string
	err := s.store.InTx(ctx, func(q Queries) error {
		memberID, accountID, err := q.UseSignInLink(ctx, HashAPIKey(token), s.clock.Now())
		if err != nil {
			return notFound(err, CodeSessionInvalid, "this sign-in link was used or has expired")
		}
		ms, err := q.MembershipsOf(ctx, memberID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.AccountID == accountID {
				out, cookie, err = s.open(ctx, q, m.Member, m)
				return err
			}
		}
		return errNotAMember
	})
	return out, cookie, err
}

// requireOwner refuses an owner's action to a member.
func (a *AppSession) requireOwner() error {
	if a.Role != RoleOwner {
		return Errorf(CodeOwnerRequired, "only the account's owners may do this")
	}
	return nil
}

// ListKeys lists the account's API keys (owners): never a key itself.
func (s *App) ListKeys(ctx context.Context, a *AppSession) ([]*APIKey, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	return s.store.ListAPIKeys(ctx, a.AccountID)
}

// CreateKey makes an API key for the account (owners), limited as in says (its
// AccountID is the session's); the key is returned to be shown once.
func (s *App) CreateKey(ctx context.Context, a *AppSession, in NewKeyInput) (*APIKey, string, error) {
	if err := a.requireOwner(); err != nil {
		return nil, "", err
	}
	var key *APIKey
	var secret string
	err := s.store.InTx(ctx, func(q Queries) error {
		acct, err := q.GetAccount(ctx, a.AccountID)
		if err != nil {
			return err
		}
		if key, secret, err = createAPIKey(ctx, q, s.kernel, s.quotas, acct, in, a.Member.ID); err != nil {
			return err
		}
		return a.audit(ctx, q, key.CreatedAt, AuditKeyCreated, key.ID, key.Limits.auditDetail(key.Name))
	})
	return key, secret, err
}

// RevokeKey revokes one of the account's keys (owners): the next request with it is
// refused on every replica, as api.md §5.4 requires.
func (s *App) RevokeKey(ctx context.Context, a *AppSession, keyID string) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(q Queries) error {
		k, err := q.GetAPIKey(ctx, keyID)
		if errors.Is(err, ErrNoRows) || err == nil && k.AccountID != a.AccountID {
			return Errorf(CodeNotFound, "no key %s in this account", keyID)
		}
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if ok, err := q.RevokeAPIKey(ctx, keyID, now); err != nil || !ok {
			return err // already revoked: nothing to record
		}
		return a.audit(ctx, q, now, AuditKeyRevoked, keyID, k.Name)
	})
}
