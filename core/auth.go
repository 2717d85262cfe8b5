package core

import (
	"context"
	"errors"
	"strings"
)

// Authenticate resolves an Authorization header to the account of its key. The header
// is `Bearer <key>` with a case-insensitive scheme; anything else is missing_api_key.
// Lookups go to the store every time, so a revocation holds from the next request. An
// expired key is answered as an unknown one (api.md has one code for a key that does
// not work).
func (s *Workspaces) Authenticate(ctx context.Context, header string) (*Account, error) {
	scheme, key, ok := strings.Cut(strings.TrimSpace(header), " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "bearer") || key == "" {
		return nil, Errorf(CodeMissingAPIKey, "send the API key as 'Authorization: Bearer svc_...'")
	}
	acct, err := s.store.AccountByKeyHash(ctx, HashAPIKey(key))
	if errors.Is(err, ErrNoRows) || err == nil && acct.KeyLimits.expired(s.clock.Now()) {
		return nil, Errorf(CodeInvalidAPIKey, "the API key is unknown, revoked or expired")
	}
	if err != nil {
		return nil, err
	}
	return acct, nil
}

// RequireEntitlement answers 403 cloud_entitlement_required for accounts without cloud.
func (s *Workspaces) RequireEntitlement(a *Account) error { return a.checkEntitled() }
