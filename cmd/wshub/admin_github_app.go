package main

// wshub admin account github-app: an account's GitHub App, whose deliveries reach the
// account's projects by their installation, and whose private key, when given, reaches
// the repositories of the account's GitHub projects that have no credential of their own.

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

func accountGitHubApp(fs *flag.FlagSet) adminRun {
	account := fs.String("account", "", "account id")
	appID := fs.Int64("app-id", 0, "the GitHub App's id")
	secretFile := fs.String("webhook-secret-file", "", "file holding the App's webhook secret")
	keyFile := fs.String("private-key-file", "", "file holding the App's private key (PEM), for the account's GitHub projects without a credential of their own")
	installations := fs.String("installation", "", "the App's installations that are the account's, comma-separated ids (empty: none)")
	return func(ctx context.Context, h adminHub) (any, error) {
		var in core.GitHubAppInput
		if flagGiven(fs, "app-id") {
			in.AppID = appID
		}
		if flagGiven(fs, "webhook-secret-file") {
			secret, err := readSecretFile("--webhook-secret-file", *secretFile)
			if err != nil {
				return nil, err
			}
			in.Secret = &secret
		}
		if flagGiven(fs, "private-key-file") {
			key, err := readSecretFile("--private-key-file", *keyFile)
			if err != nil {
				return nil, err
			}
			in.PrivateKey = &key
		}
		if flagGiven(fs, "installation") {
			in.Installations = []int64{}
			for _, part := range strings.Split(*installations, ",") {
				if part = strings.TrimSpace(part); part == "" {
					continue
				}
				id, err := strconv.ParseInt(part, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("--installation: %q is not an installation's id", part)
				}
				in.Installations = append(in.Installations, id)
			}
		}
		app, err := h.svc.ForgeAdmin.SetGitHubApp(ctx, *account, in)
		if err != nil {
			return nil, err
		}
		ids := app.Installations
		if ids == nil {
			ids = []int64{}
		}
		return githubAppOut{AccountID: app.AccountID, AppID: app.AppID, Installations: ids, PrivateKey: len(app.SealedKey) > 0,
			UpdatedAt: app.UpdatedAt.UTC().Format(time.RFC3339)}, nil
	}
}

// githubAppOut is what account github-app prints; never the secret nor the key.
type githubAppOut struct {
	AccountID     string  `json:"accountId"`
	AppID         int64   `json:"appId"`
	Installations []int64 `json:"installations"`
	// PrivateKey says whether the App has its key.
	PrivateKey bool   `json:"privateKey"`
	UpdatedAt  string `json:"updatedAt"`
}
