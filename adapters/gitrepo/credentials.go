package gitrepo

import (
	"github.com/wshub/wshub/internal/shellword"

	"cmp"
	"context"
	"errors"
	"os"

	"github.com/wshub/wshub/core"
)

// Credentials let the hub's git reach private repositories without putting a secret
// in a repository URL (which is stored, shown and logged):
//
//   - an HTTPS token, answered by an inline credential helper to any https remote that
//     asks (GitHub, GitLab and Bitbucket take a token as the password);
//   - an SSH deploy key, used through GIT_SSH_COMMAND with only that identity.
//
// They reach the git process only (its environment and command line), never an agent:
// agents do not run the hub's git, and the hub's git runs no hook.
type Credentials struct {
	// HTTPSUser is the user name sent with the token ("x-access-token" when empty).
	HTTPSUser string
	// HTTPSToken is the token sent as the password.
	HTTPSToken string
	// SSHKeyFile is a private key file for ssh remotes.
	SSHKeyFile string
	// SSHKey is a private key given as bytes (a project's deploy key): it is written to a
	// file of its own, mode 0600 in KeyDir, for the length of each git command.
	SSHKey []byte
	// KeyDir holds those files ("": the system's temporary directory).
	KeyDir string
	// Own marks a project's own credentials: its git gets nothing of the hub user's
	// (ssh agent, ssh command, askpass), so one project cannot borrow another's access.
	Own bool
	// pin is the checked address a guarded remote's git connects to (nil: unguarded).
	pin *remotePin
}

// Apps mints GitHub App installation tokens (adapters/forge/github.Apps), cached until
// shortly before they expire.
type Apps interface {
	InstallationToken(ctx context.Context, repository string, appID, installationID int64, privateKey []byte) (string, error)
	// RepositoryToken finds the App's installation on repository, one of allowed
	// (core.ErrNoRows: the App is not installed there).
	RepositoryToken(ctx context.Context, repository string, appID int64, privateKey []byte, allowed []int64) (string, error)
}

// ProjectCredentials picks the credentials a project's git uses: its own, which core
// opened into Project.Credential, or the hub-wide Fallback for a project without.
type ProjectCredentials struct {
	// Fallback are the hub-wide credentials (nil: none).
	Fallback *Credentials
	// Apps mints tokens for GitHub App credentials (nil: those are refused).
	Apps Apps
	// KeyDir is where SSH deploy keys are written for a command (Credentials.KeyDir).
	KeyDir string
	// Guard checks and pins the remotes of projects marked RemoteGuarded (nil: the
	// system's resolver, no loopback).
	Guard *RemoteGuard
}

// For returns the credentials of p's git, pinned to the address checked when p's
// remote is guarded. A nil receiver has none (and refuses a guarded remote).
func (pc *ProjectCredentials) For(ctx context.Context, p *core.Project) (*Credentials, error) {
	c, err := pc.credentials(ctx, p)
	if err != nil || p == nil || !p.RemoteGuarded {
		return c, err
	}
	if pc == nil {
		return nil, errors.New("this hub cannot check a repository given in the app")
	}
	pin, err := cmp.Or(pc.Guard, &RemoteGuard{}).pin(ctx, p.Repository)
	if err != nil {
		return nil, err
	}
	pinned := Credentials{}
	if c != nil {
		pinned = *c // a copy: Fallback is shared by every project
	}
	pinned.pin = pin
	return &pinned, nil
}

// credentials are p's own, or the hub-wide Fallback.
func (pc *ProjectCredentials) credentials(ctx context.Context, p *core.Project) (*Credentials, error) {
	if pc == nil {
		return nil, nil
	}
	if p == nil || p.Credential == nil {
		if p != nil && p.CredentialKind != "" {
			return nil, errors.New("the project's credential was not opened") // a core bug: fail closed
		}
		return pc.Fallback, nil
	}
	c := p.Credential
	switch c.Kind {
	case core.CredentialToken:
		return &Credentials{HTTPSUser: c.User, HTTPSToken: c.Token, Own: true}, nil
	case core.CredentialSSHKey:
		return &Credentials{SSHKey: []byte(c.SSHKey), KeyDir: pc.KeyDir, Own: true}, nil
	case core.CredentialGitHubApp:
		if pc.Apps == nil {
			return nil, errors.New("this hub cannot mint GitHub App tokens")
		}
		token, err := pc.Apps.InstallationToken(ctx, p.Repository, c.AppID, c.InstallationID, []byte(c.AppKey))
		if err != nil {
			return nil, err
		}
		return &Credentials{HTTPSUser: "x-access-token", HTTPSToken: token, Own: true}, nil
	case core.CredentialAccountApp:
		if pc.Apps == nil {
			return nil, errors.New("this hub cannot mint GitHub App tokens")
		}
		token, err := pc.Apps.RepositoryToken(ctx, p.Repository, c.AppID, []byte(c.AppKey), c.Installations)
		if errors.Is(err, core.ErrNoRows) {
			// The account's App is not on this repository: the project goes on as it
			// did before the App had a key.
			return pc.Fallback, nil
		}
		if err != nil {
			return nil, err
		}
		return &Credentials{HTTPSUser: "x-access-token", HTTPSToken: token, Own: true}, nil
	}
	return nil, errors.New("the project's credential is of an unknown kind")
}

// Token is the HTTPS token p's forge calls use: its own token, an installation token
// of its GitHub App, or the hub-wide token.
func (pc *ProjectCredentials) Token(ctx context.Context, p *core.Project) (string, error) {
	c, err := pc.For(ctx, p)
	if err != nil {
		return "", err
	}
	if c.token() == "" {
		return "", errors.New("the project has no token for its forge (an SSH deploy key cannot call the forge's API; give it a token or a GitHub App)")
	}
	return c.token(), nil
}

// keyFile writes SSHKey to a file of its own for one command; remove deletes it.
func (c *Credentials) keyFile() (path string, remove func(), err error) {
	if c == nil || len(c.SSHKey) == 0 {
		return "", func() {}, nil
	}
	if c.KeyDir != "" {
		if err := os.MkdirAll(c.KeyDir, 0o700); err != nil {
			return "", nil, err
		}
	}
	f, err := os.CreateTemp(c.KeyDir, "wshub-key-*") // mode 0600, a new name (O_EXCL)
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.Remove(f.Name()) }
	if _, err := f.Write(c.SSHKey); err != nil {
		_ = f.Close()
		remove()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, err
	}
	return f.Name(), remove, nil
}

// tokenHelper answers git's credential "get" from the environment git was given; the
// token is not on any command line (ps shows those).
const tokenHelper = `!f() { test "$1" = get && printf 'username=%s\npassword=%s\n' "$WSHUB_GIT_HTTPS_USER" "$WSHUB_GIT_HTTPS_TOKEN"; }; f`

// args are the configuration the credentials add to a git command line: no credential
// helper from anywhere else, then the token's.
func (c *Credentials) args() []string {
	if c == nil {
		return nil
	}
	args := c.pin.args()
	if c.HTTPSToken == "" {
		return args
	}
	return append(args, "-c", "credential.helper=", "-c", "credential.helper="+tokenHelper)
}

// env is what the credentials add to git's environment (later entries win); keyFile is
// where SSHKey was written for this command.
func (c *Credentials) env(keyFile string) []string {
	if c == nil {
		return nil
	}
	var env []string
	if c.HTTPSToken != "" {
		user := c.HTTPSUser
		if user == "" {
			user = "x-access-token"
		}
		env = append(env, "WSHUB_GIT_HTTPS_USER="+user, "WSHUB_GIT_HTTPS_TOKEN="+c.HTTPSToken)
	}
	if key := cmp.Or(keyFile, c.SSHKeyFile); key != "" {
		env = append(env, "GIT_SSH_COMMAND=ssh -i "+shellword.Quote(key)+" -o IdentitiesOnly=yes -o BatchMode=yes"+c.pin.sshOptions())
	} else if c.pin != nil && c.pin.ssh {
		env = append(env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes"+c.pin.sshOptions())
	}
	return env
}

// hubOnly are the variables of the hub user's own access, which a project with
// credentials of its own does not get.
var hubOnly = map[string]bool{"SSH_AUTH_SOCK": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true}

// own reports whether these are a project's own credentials.
func (c *Credentials) own() bool { return c != nil && c.Own }

func (c *Credentials) token() string {
	if c == nil {
		return ""
	}
	return c.HTTPSToken
}
