package core

import (
	"context"
	"time"
)

// Account is a personal account of the hub: the owner of keys, projects, workspaces and
// webhooks. Entitlement and billing are operator-set flags (see design.md, admin).
type Account struct {
	ID       string
	Name     string
	Entitled bool
	// BillingHold blocks creating workspaces and sending messages.
	BillingHold bool
	// Metered accounts pay by billing period: creating workspaces and sending messages
	// need a current one. Accounts that are not metered (the development account, an
	// operator's own) are never checked. An explicit property rather than "no period
	// end": api.md says a missing billing period is refused.
	Metered bool
	// BillingPeriodEnd is the end of a metered account's current billing period. Nil
	// (none recorded) or a time in the past (it ran out and no new one was recorded):
	// cloud_billing_period_missing.
	BillingPeriodEnd *time.Time
	// MaxWorkspaces, MaxOpenMessages and MaxRunningTurns are the operator's quotas
	// for this account (nil: the hub's defaults, quota.go).
	MaxWorkspaces, MaxOpenMessages, MaxRunningTurns *int
	// MaxKeys is the operator's quota of live API keys for this account (nil: the
	// hub's default).
	MaxKeys *int
	// ProviderID is the provider of the account's workspaces whose create names none
	// ("": the hub's default).
	ProviderID string
	CreatedAt  time.Time
	// KeyID and KeyName are the API key a request was authenticated with (Authenticate
	// sets them; "" otherwise): the author of what the request writes. Address is where
	// the request came from, as the front-end saw it: the audit log's "from where".
	KeyID, KeyName, Address string
	// KeyLimits are the request's key's scopes, projects and expiry (zero: full
	// access, and always for the app's and chat's callers).
	KeyLimits KeyLimits
}

// checkEntitled answers 403 cloud_entitlement_required for accounts without cloud.
func (a *Account) checkEntitled() error {
	if !a.Entitled {
		return Errorf(CodeEntitlementRequired, "this account has no cloud entitlement; the hub's operator grants it with: wshub admin account update --account %s --entitled=true", a.ID)
	}
	return nil
}

// checkBilling is run on create workspace and send message, before anything is stored.
func (a *Account) checkBilling(now time.Time) error {
	if a.BillingHold {
		return Errorf(CodeBillingHold, "this account has a billing hold; the hub's operator lifts it with: wshub admin account update --account %s --billing-hold=false", a.ID)
	}
	if a.Metered && (a.BillingPeriodEnd == nil || !now.Before(*a.BillingPeriodEnd)) {
		return Errorf(CodeBillingPeriodMissing, "this account is metered and has no current billing period; the hub's operator records one with: wshub admin account update --account %s --billing-period-end <RFC 3339 time>, or makes the account unmetered with --metered=false", a.ID)
	}
	return nil
}

// APIKey is a stored key. Only the SHA-256 hash of the secret is kept.
type APIKey struct {
	ID        string
	AccountID string
	Name      string
	Hash      []byte
	CreatedAt time.Time
	RevokedAt *time.Time
	// LastUsedAt is when the key last authenticated a request, within a minute (nil: never).
	LastUsedAt *time.Time
	// CreatedBy is the member who made the key in the app ("": the operator), and
	// CreatedByName their name as the hub knows it.
	CreatedBy, CreatedByName string
	// Limits are the key's scopes, projects and expiry (zero: full access).
	Limits KeyLimits
}

// AccountQueries are the store statements of accounts and their API keys.
type AccountQueries interface {
	CreateAccount(ctx context.Context, a *Account) error
	UpdateAccount(ctx context.Context, a *Account) error
	GetAccount(ctx context.Context, id string) (*Account, error)
	// CountWork counts workspaces by state (deleted left out) and open user messages.
	CountWork(ctx context.Context) (*WorkCounts, error)
	// ListAccounts lists every account, oldest first (operator).
	ListAccounts(ctx context.Context) ([]*Account, error)
	// ListAPIKeys lists an account's keys, revoked ones included, oldest first.
	ListAPIKeys(ctx context.Context, accountID string) ([]*APIKey, error)
	// LockAccount takes the account row lock, serialising per-account limits.
	LockAccount(ctx context.Context, id string) error

	CreateAPIKey(ctx context.Context, k *APIKey) error
	// CountLiveAPIKeys counts the account's keys that are not revoked.
	CountLiveAPIKeys(ctx context.Context, accountID string) (int, error)
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (bool, error)
	// GetAPIKey reads a key (never its hash) by id, revoked or not.
	GetAPIKey(ctx context.Context, id string) (*APIKey, error)
	// AccountByKeyHash returns the account of a key that is not revoked.
	AccountByKeyHash(ctx context.Context, hash []byte) (*Account, error)
}
