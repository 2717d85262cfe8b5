package github

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"

	"github.com/wshub/wshub/core"
)

// Apps mints GitHub App installation tokens. A token lives an hour; ghinstallation
// keeps it and mints the next one a minute before it ends. Apps keeps one of its
// transports per (API, app, installation, key), so every project of one installation
// shares the token, and a changed key starts afresh. The zero value is ready to use.
type Apps struct {
	// HTTPClient's transport carries the token requests (nil: http.DefaultTransport).
	// Its timeout does not apply: ghinstallation calls the transport itself, so the
	// caller's context bounds the call.
	HTTPClient *http.Client

	mu         sync.Mutex
	transports map[appKey]*ghinstallation.Transport
	// installed are the installations found by repository (RepositoryToken).
	installed map[repoInstallation]found
}

// appKey names a transport. The key is held by its hash: a map key is no place for a
// secret, and a rotated key must not reuse the old key's transport.
type appKey struct {
	base                  string
	appID, installationID int64
	key                   [sha256.Size]byte
}

// InstallationToken is a token of App appID's installationID, for the API of the
// forge repository is on, minted when there is none or the last is about to end. A
// refusal (a key GitHub does not take, an installation that is not the App's) is a
// *core.ForgeRefusal in GitHub's words; no error holds the key.
func (a *Apps) InstallationToken(ctx context.Context, repository string, appID, installationID int64, privateKey []byte) (string, error) {
	base, _, _, err := locate(repository)
	if err != nil {
		return "", err
	}
	// ghinstallation wants the base without its trailing slash: it adds
	// "/app/installations/ID/access_tokens" itself.
	base = strings.TrimSuffix(base, "/")
	tr, err := a.transport(base, appID, installationID, privateKey)
	if err != nil {
		return "", err
	}
	token, err := tr.Token(ctx)
	if err != nil {
		return "", appRefusal(err, base, appID, installationID)
	}
	return token, nil
}

func (a *Apps) transport(base string, appID, installationID int64, privateKey []byte) (*ghinstallation.Transport, error) {
	k := appKey{base: base, appID: appID, installationID: installationID, key: sha256.Sum256(privateKey)}
	a.mu.Lock()
	defer a.mu.Unlock()
	if tr := a.transports[k]; tr != nil {
		return tr, nil
	}
	var rt http.RoundTripper = http.DefaultTransport
	if a.HTTPClient != nil && a.HTTPClient.Transport != nil {
		rt = a.HTTPClient.Transport
	}
	tr, err := ghinstallation.New(rt, appID, installationID, privateKey)
	if err != nil {
		// The library's words name the parser, never the key; ours say what to fix.
		return nil, &core.ForgeRefusal{Reason: fmt.Sprintf("the private key of GitHub App %d is not a PEM RSA private key", appID)}
	}
	tr.BaseURL = base
	if a.transports == nil {
		a.transports = map[appKey]*ghinstallation.Transport{}
	}
	a.transports[k] = tr
	return tr, nil
}

// appRefusal reads GitHub's answer to a token request: ghinstallation leaves the
// response's body for the caller, which holds GitHub's message.
func appRefusal(err error, base string, appID, installationID int64) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var he *ghinstallation.HTTPError
	if !errors.As(err, &he) {
		return fmt.Errorf("github: token of App %d installation %d: %w", appID, installationID, err)
	}
	if he.Response == nil {
		return &core.ForgeRefusal{Reason: clean(fmt.Sprintf("could not reach GitHub at %s for App %d's token: %v", base, appID, he.RootCause), "")}
	}
	defer he.Response.Body.Close()
	var body struct {
		Message string `json:"message"`
	}
	data, _ := io.ReadAll(io.LimitReader(he.Response.Body, 64<<10))
	msg := http.StatusText(he.Response.StatusCode)
	if json.Unmarshal(data, &body) == nil && body.Message != "" {
		msg = body.Message
	}
	reason := fmt.Sprintf("GitHub gave App %d no token for installation %d: %s", appID, installationID, msg)
	if he.Response.StatusCode == http.StatusNotFound {
		reason += " (no such installation, or it is another App's)"
	}
	return &core.ForgeRefusal{Status: he.Response.StatusCode, Reason: clean(reason, "")}
}
