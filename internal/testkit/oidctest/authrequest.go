package oidctest

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Adapted from zitadel/oidc's example/server/storage/oidc.go (Apache License 2.0).

// authRequest is one sign-in in progress: the client's authorization request, and
// once the login step is done, who signed in and when.
type authRequest struct {
	id       string
	req      oidc.AuthRequest
	subject  string
	authTime time.Time
}

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string          { return a.id }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAudience() []string  { return []string{a.req.ClientID} }
func (a *authRequest) GetAuthTime() time.Time { return a.authTime }
func (a *authRequest) GetClientID() string    { return a.req.ClientID }
func (a *authRequest) GetNonce() string       { return a.req.Nonce }
func (a *authRequest) GetRedirectURI() string { return a.req.RedirectURI }
func (a *authRequest) GetScopes() []string    { return a.req.Scopes }
func (a *authRequest) GetState() string       { return a.req.State }
func (a *authRequest) GetSubject() string     { return a.subject }
func (a *authRequest) Done() bool             { return a.subject != "" }

func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }

// GetAMR says how the user authenticated; "pwd" stands for the login step.
func (a *authRequest) GetAMR() []string {
	if a.Done() {
		return []string{"pwd"}
	}
	return nil
}

// GetCodeChallenge passes the method through, so that the op refuses an unsupported
// one rather than verifying it as plain.
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}
