package core

import (
	"context"
	"errors"
	"fmt"
)

// An account's GitHub App with its private key stands in for the credential of the
// account's GitHub projects that have none of their own: the hub finds the App's
// installation on each project's repository and mints installation tokens for its
// git and forge calls. The key is opened here, just before those calls, as a
// project's own credential is, and reaches only the hub's token minting.

// accountApps reads an account's GitHub App (GitHubAppQueries.GetGitHubApp).
type accountApps interface {
	GetGitHubApp(ctx context.Context, accountID string) (*GitHubApp, error)
}

// accountApp lends p its account's GitHub App when p is a GitHub project without a
// credential of its own and the App has its key. A repository an account's owner gave
// in the app is lent the App only on github.com: the App's signed requests go to the
// host the repository names, and no owner picks that host for the operator's App.
func (k kernel) accountApp(ctx context.Context, p *Project) error {
	if k.apps == nil || p.Forge != ForgeGitHub || (p.RemoteGuarded && DetectForge(p.Repository) != ForgeGitHub) {
		return nil
	}
	app, err := k.apps.GetGitHubApp(ctx, p.AccountID)
	switch {
	case errors.Is(err, ErrNoRows):
		return nil
	case err != nil:
		return err
	case len(app.SealedKey) == 0:
		return nil
	}
	key, err := k.open(app.SealedKey, SealedGitHubAppKey.binding(app.AccountID, app.AccountID))
	if err != nil {
		return fmt.Errorf("open the account's GitHub App key: %w", err)
	}
	p.Credential = &ProjectCredential{Kind: CredentialAccountApp, AppID: app.AppID, AppKey: key, Installations: app.Installations}
	return nil
}
