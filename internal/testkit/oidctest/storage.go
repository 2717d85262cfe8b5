package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Adapted from zitadel/oidc's example/server/storage/storage.go (Apache License 2.0):
// its in-memory op.Storage, trimmed to the authorization code flow with no refresh
// tokens, no service users and no device flow.

// storage is the provider's state: clients, sign-ins in progress, codes and access
// tokens, and the signing key.
type storage struct {
	accounts *accounts
	key      signingKey

	mu           sync.Mutex
	clients      map[string]*client
	authRequests map[string]*authRequest
	codes        map[string]string // code -> auth request ID
	tokens       map[string]*accessToken
}

type accessToken struct {
	subject  string
	clientID string
	scopes   []string
	expires  time.Time
}

var (
	_ op.Storage                   = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest = (*storage)(nil)
)

var errNotSupported = errors.New("not supported by oidctest")

func newStorage(key *rsa.PrivateKey, accounts *accounts) *storage {
	return &storage{
		accounts:     accounts,
		key:          signingKey{id: rand.Text(), key: key},
		clients:      map[string]*client{},
		authRequests: map[string]*authRequest{},
		codes:        map[string]string{},
		tokens:       map[string]*accessToken{},
	}
}

func (s *storage) addClient(c *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.id] = c
}

// CreateAuthRequest is called once the op has checked the request against the client.
func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	// No sessions are kept, so there is no one to sign in without a login step.
	if slices.Contains(req.Prompt, oidc.PromptNone) {
		return nil, oidc.ErrLoginRequired()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The op alone would let a public client use PKCE's plain method, which protects
	// nothing against a code intercepted with its challenge; OAuth 2.1 asks for S256.
	if c, ok := s.clients[req.ClientID]; ok && c.public() &&
		(req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256) {
		return nil, oidc.ErrInvalidRequest().WithDescription("a public client must use PKCE with code_challenge_method S256")
	}
	a := &authRequest{id: rand.Text(), req: *req}
	s.authRequests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return nil, fmt.Errorf("auth request %q not found", id)
	}
	return a, nil
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("code invalid or already used")
	}
	return s.AuthRequestByID(ctx, id)
}

// finishLogin records who signed in for the auth request id.
func (s *storage) finishLogin(id, subject string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return fmt.Errorf("auth request %q not found (already used, or of another provider)", id)
	}
	a.subject = subject
	a.authTime = time.Now()
	return nil
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest is called once the code was exchanged, which makes the code good
// for one exchange only.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, requestID := range s.codes {
		if requestID == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	a, ok := req.(*authRequest)
	if !ok {
		return "", time.Time{}, fmt.Errorf("token request %T: %w", req, errNotSupported)
	}
	t := &accessToken{subject: a.subject, clientID: a.req.ClientID, scopes: a.req.Scopes, expires: time.Now().Add(time.Hour)}
	id := rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id] = t
	return id, t.expires, nil
}

// SetUserinfoFromToken answers the userinfo endpoint for an access token.
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || t.subject != subject {
		return errors.New("access token not found")
	}
	if time.Now().After(t.expires) {
		return errors.New("access token expired")
	}
	return s.setUserinfo(info, subject, t.scopes)
}

// SetUserinfoFromRequest fills the ID token's claims.
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	return s.setUserinfo(info, req.GetSubject(), scopes)
}

// SetUserinfoFromScopes is deprecated in favour of SetUserinfoFromRequest, which the
// op calls right after it.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (s *storage) setUserinfo(info *oidc.UserInfo, subject string, scopes []string) error {
	u, ok := s.accounts.user(subject)
	if !ok {
		return fmt.Errorf("user %q not found", subject)
	}
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeOpenID:
			info.Subject = u.Subject
			for k, v := range u.Extra {
				info.AppendClaims(k, v)
			}
		case oidc.ScopeEmail:
			info.Email = u.Email
			info.EmailVerified = oidc.Bool(u.Email != "")
		case oidc.ScopeProfile:
			info.Name = u.Name
		}
	}
	return nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, fmt.Errorf("client %q not found", id)
	}
	return c, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok || c.public() || subtle.ConstantTimeCompare([]byte(c.secret), []byte(secret)) != 1 {
		return errors.New("wrong client ID or secret")
	}
	return nil
}

// TerminateSession is the end_session endpoint's: the user's tokens for the client go.
func (s *storage) TerminateSession(_ context.Context, subject, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tokens {
		if t.subject == subject && t.clientID == clientID {
			delete(s.tokens, id)
		}
	}
	return nil
}

// RevokeToken forgets an access token; anything else is already not valid, which is
// all revocation promises.
func (s *storage) RevokeToken(_ context.Context, tokenID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[tokenID]; ok {
		if t.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
		}
		delete(s.tokens, tokenID)
	}
	return nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return &s.key, nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{&publicKey{s.key}}, nil
}

func (s *storage) Health(context.Context) error { return nil }

// What follows belongs to flows this provider does not offer.

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, fmt.Errorf("refresh tokens: %w", errNotSupported)
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, fmt.Errorf("refresh tokens: %w", errNotSupported)
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return fmt.Errorf("introspection: %w", errNotSupported)
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, fmt.Errorf("JWT profile: %w", errNotSupported)
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, fmt.Errorf("JWT profile: %w", errNotSupported)
}

// signingKey is the private half, which signs; publicKey is what JWKS shows.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k *publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *publicKey) Use() string                        { return "sig" }
func (k *publicKey) Key() any                           { return &k.key.PublicKey }
