package github

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/core"
)

// notInstalledFor is how long "the App is not installed on this repository" is kept:
// installing it there shows within a minute, and a project's git asks often.
const notInstalledFor = time.Minute

// repoInstallation names a repository's installation in the cache.
type repoInstallation struct {
	base, repo string
	appID      int64
	key        [sha256.Size]byte
}

// found is a repository's installation as GitHub said (id 0: none, until expires).
type found struct {
	id      int64
	expires time.Time
}

// RepositoryToken is an installation token of App appID for repository: the
// installation is found with the App's JWT (GET /repos/{owner}/{repo}/installation)
// and kept, so a project's git and forge calls ask once; the token is
// InstallationToken's, shared with every project of that installation. The
// installation must be one of allowed (the account's): another's is refused in words.
// core.ErrNoRows says the App is not installed on the repository.
func (a *Apps) RepositoryToken(ctx context.Context, repository string, appID int64, privateKey []byte, allowed []int64) (string, error) {
	base, owner, name, err := locate(repository)
	if err != nil {
		return "", err
	}
	k := repoInstallation{base: base, repo: strings.ToLower(owner + "/" + name), appID: appID, key: sha256.Sum256(privateKey)}
	id, err := a.installationOf(ctx, k, owner, name, privateKey)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, id) {
		return "", &core.ForgeRefusal{Reason: fmt.Sprintf("GitHub App %d is installed on %s/%s as installation %d, which is not one of the account's installations (wshub admin account github-app --installation)",
			appID, owner, name, id)}
	}
	token, err := a.InstallationToken(ctx, repository, appID, id, privateKey)
	var refused *core.ForgeRefusal
	if errors.As(err, &refused) && refused.Status == http.StatusNotFound {
		a.forget(k) // uninstalled since: the next call looks again
	}
	return token, err
}

// installationOf is the installation of k's App on k's repository, from the cache or
// from GitHub.
func (a *Apps) installationOf(ctx context.Context, k repoInstallation, owner, name string, privateKey []byte) (int64, error) {
	now := time.Now()
	a.mu.Lock()
	f, ok := a.installed[k]
	a.mu.Unlock()
	if !ok || (f.id == 0 && now.After(f.expires)) {
		id, err := a.findInstallation(ctx, k.base, owner, name, k.appID, privateKey)
		if err != nil {
			return 0, err
		}
		f = found{id: id, expires: now.Add(notInstalledFor)}
		a.mu.Lock()
		if a.installed == nil {
			a.installed = map[repoInstallation]found{}
		}
		a.installed[k] = f
		a.mu.Unlock()
	}
	if f.id == 0 {
		return 0, fmt.Errorf("github: App %d is not installed on %s/%s: %w", k.appID, owner, name, core.ErrNoRows)
	}
	return f.id, nil
}

func (a *Apps) forget(k repoInstallation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.installed, k)
}

// findInstallation asks GitHub, as the App, for its installation on owner/name (0:
// none).
func (a *Apps) findInstallation(ctx context.Context, base, owner, name string, appID int64, privateKey []byte) (int64, error) {
	rt := http.DefaultTransport
	if a.HTTPClient != nil && a.HTTPClient.Transport != nil {
		rt = a.HTTPClient.Transport
	}
	atr, err := ghinstallation.NewAppsTransport(rt, appID, privateKey)
	if err != nil {
		return 0, &core.ForgeRefusal{Reason: fmt.Sprintf("the private key of GitHub App %d is not a PEM RSA private key", appID)}
	}
	c, err := gh.NewClient(gh.WithHTTPClient(&http.Client{Transport: atr}), gh.WithURLs(&base, nil), gh.WithUserAgent("wshub"))
	if err != nil {
		return 0, fmt.Errorf("github: client for %s: %w", base, err)
	}
	in, resp, err := c.Apps.GetRepositoryInstallation(ctx, owner, name)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return 0, nil
	}
	if err != nil {
		return 0, refusal(err, repo{base: base, owner: owner, name: name})
	}
	return in.GetID(), nil
}
