package core

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An account's GitHub App: one App delivers the events of every repository it is
// installed on, signed with the App's one webhook secret, each naming its
// installation. The hub maps an installation to the account that owns it, then the
// repository to that account's project; a project of the account takes the App's
// events without a secret of its own.

// GitHubApp is an account's GitHub App as its events reach the hub.
type GitHubApp struct {
	AccountID string
	AppID     int64
	// SealedSecret is the App's webhook secret.
	SealedSecret []byte
	// SealedKey is the App's private key (empty: none given); with it the account's
	// GitHub projects without a credential of their own use the App's installations.
	SealedKey []byte
	// Installations are the App's installations that are the account's.
	Installations []int64
	UpdatedAt     time.Time
}

// GitHubAppQueries are the store statements of accounts' GitHub Apps.
type GitHubAppQueries interface {
	// PutGitHubApp stores the account's App; its installations replace the ones before
	// (ErrConflict: one is another account's).
	PutGitHubApp(ctx context.Context, a *GitHubApp) error
	// GetGitHubApp reads the account's App (ErrNoRows: none).
	GetGitHubApp(ctx context.Context, accountID string) (*GitHubApp, error)
	// GitHubAppOfInstallation reads the App of the account an installation is
	// (ErrNoRows: none).
	GitHubAppOfInstallation(ctx context.Context, installation int64) (*GitHubApp, error)
}

// GitHubAppInput is what `wshub admin account github-app` sets; nil fields are kept
// (the first setting needs the App's id and secret).
type GitHubAppInput struct {
	AppID  *int64
	Secret *string
	// PrivateKey is the App's private key (PEM RSA), sealed as the secret is.
	PrivateKey *string
	// Installations replace the account's (nil: kept).
	Installations []int64
}

// maxInstallations bounds an account's installations: one per organisation or user
// the App is installed on.
const maxInstallations = 100

// SetGitHubApp sets an account's GitHub App (operator).
func (s *ForgeAdmin) SetGitHubApp(ctx context.Context, accountID string, in GitHubAppInput) (*GitHubApp, error) {
	var out *GitHubApp
	err := s.store.InTx(ctx, func(q Queries) error {
		if _, err := q.GetAccount(ctx, accountID); err != nil {
			return notFound(err, CodeNotFound, "no account "+accountID)
		}
		a, err := q.GetGitHubApp(ctx, accountID)
		switch {
		case errors.Is(err, ErrNoRows):
			if in.AppID == nil || in.Secret == nil {
				return Errorf(CodeInvalidRequest, "a GitHub App needs its id and its webhook secret")
			}
			a = &GitHubApp{AccountID: accountID}
		case err != nil:
			return err
		}
		if in.AppID != nil {
			if *in.AppID < 1 {
				return Errorf(CodeInvalidRequest, "the App's id is a positive number")
			}
			a.AppID = *in.AppID
		}
		if in.Secret != nil {
			secret := strings.TrimSpace(*in.Secret)
			if secret == "" || len(secret) > maxForgeSecret {
				return Errorf(CodeInvalidRequest, "the webhook secret is 1 to %d characters", maxForgeSecret)
			}
			if a.SealedSecret, err = s.seal([]byte(secret), SealedGitHubAppSecret.binding(accountID, accountID)); err != nil {
				return err
			}
		}
		if in.PrivateKey != nil {
			if len(*in.PrivateKey) > maxCredentialBytes || !validRSAKey(*in.PrivateKey) {
				return Errorf(CodeInvalidRequest, "the App's private key is not a PEM RSA private key")
			}
			if a.SealedKey, err = s.seal([]byte(*in.PrivateKey), SealedGitHubAppKey.binding(accountID, accountID)); err != nil {
				return err
			}
		}
		if in.Installations != nil {
			if err := checkInstallations(ctx, q, accountID, in.Installations); err != nil {
				return err
			}
			a.Installations = slices.Compact(slices.Sorted(slices.Values(in.Installations)))
		}
		a.UpdatedAt = s.clock.Now()
		if err := q.PutGitHubApp(ctx, a); err != nil {
			return err
		}
		out = a
		return operatorAudit(ctx, q, accountID, a.UpdatedAt, AuditGitHubApp, accountID, "app "+strconv.FormatInt(a.AppID, 10))
	})
	return out, err
}

// checkInstallations refuses an installation id that is not one, or is another
// account's: its events would have two owners.
func checkInstallations(ctx context.Context, q Queries, accountID string, ids []int64) error {
	if len(ids) > maxInstallations {
		return Errorf(CodeInvalidRequest, "at most %d installations", maxInstallations)
	}
	for _, id := range ids {
		if id < 1 {
			return Errorf(CodeInvalidRequest, "an installation's id is a positive number")
		}
		switch other, err := q.GitHubAppOfInstallation(ctx, id); {
		case err == nil && other.AccountID != accountID:
			return Errorf(CodeInvalidRequest, "installation %d is another account's", id)
		case err != nil && !errors.Is(err, ErrNoRows):
			return err
		}
	}
	return nil
}

// acceptAppEvent takes a delivery of an account's GitHub App: verified by the App's
// secret, then stored under the account's project of the repository it names.
func (s *ForgeEvents) acceptAppEvent(ctx context.Context, in ChatArrival, sig ForgeSignature, app *GitHubApp) (ForgeAcceptance, error) {
	secret, err := s.open(app.SealedSecret, SealedGitHubAppSecret.binding(app.AccountID, app.AccountID))
	if err != nil {
		return ForgeUnverified, err
	}
	if !sig.Verify([]byte(secret)) {
		return ForgeUnverified, nil
	}
	hooks, err := s.hooksOf(ctx, in.Platform, sig.Repositories)
	if err != nil {
		return ForgeUnverified, err
	}
	for _, h := range hooks {
		if h.AccountID == app.AccountID {
			return s.keep(ctx, in, sig, h)
		}
	}
	return ForgeUnknownRepository, nil
}
