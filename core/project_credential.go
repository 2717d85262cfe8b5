package core

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
)

// Project credentials: how the hub's own git and forge calls reach one project's
// repository, so that a hub shared by several accounts does not make every project as
// reachable as the most privileged one. A credential is sealed at rest (bound to its
// project), covered by admin reseal, never shown, and never given to a runtime or an
// agent: only the hub's git processes and forge clients use it.

// Credential kinds.
const (
	// CredentialToken is an HTTPS token, sent as the password.
	CredentialToken = "token"
	// CredentialSSHKey is an SSH deploy key for ssh remotes.
	CredentialSSHKey = "ssh_key"
	// CredentialGitHubApp is a GitHub App installation: tokens are minted when needed.
	CredentialGitHubApp = "github_app"
	// CredentialAccountApp is the account's GitHub App, lent to a GitHub project that
	// has no credential of its own. It is never stored on a project: it is set when the
	// project's credential is opened, and the installation is the one the App has on
	// the project's repository, found by the hub.
	CredentialAccountApp = "account_github_app"
)

// ProjectCredential is one project's credential, as sealed (JSON).
type ProjectCredential struct {
	Kind string `json:"kind"`
	// User is the HTTPS user name sent with a token ("x-access-token" when empty).
	User  string `json:"user,omitempty"`
	Token string `json:"token,omitempty"`
	// SSHKey is a private key, OpenSSH or PEM.
	SSHKey string `json:"sshKey,omitempty"`
	// AppID, InstallationID and AppKey (a PEM RSA private key) are a GitHub App's.
	AppID          int64  `json:"appId,omitempty"`
	InstallationID int64  `json:"installationId,omitempty"`
	AppKey         string `json:"appKey,omitempty"`
	// Installations are the account's, of which the repository's must be one
	// (CredentialAccountApp).
	Installations []int64 `json:"-"`
}

// maxCredentialBytes bounds any one secret given (keys are a few KiB).
const maxCredentialBytes = 16 << 10

// Validate refuses a credential that cannot work, naming what is wrong and never
// echoing a secret.
func (c *ProjectCredential) Validate() error {
	if len(c.Token) > maxCredentialBytes || len(c.SSHKey) > maxCredentialBytes || len(c.AppKey) > maxCredentialBytes {
		return Errorf(CodeInvalidRequest, "a credential is at most %d bytes", maxCredentialBytes)
	}
	switch c.Kind {
	case CredentialToken:
		c.Token = strings.TrimSpace(c.Token)
		if c.Token == "" || strings.ContainsAny(c.Token, " \t\r\n") {
			return Errorf(CodeInvalidRequest, "the token is empty or holds white space")
		}
		if strings.ContainsAny(c.User, ":\r\n") {
			return Errorf(CodeInvalidRequest, "the token's user name must not hold ':' or a line break")
		}
	case CredentialSSHKey:
		if !strings.Contains(c.SSHKey, "PRIVATE KEY-----") {
			return Errorf(CodeInvalidRequest, "the SSH key is not a private key (OpenSSH or PEM)")
		}
		if !strings.HasSuffix(c.SSHKey, "\n") {
			c.SSHKey += "\n" // ssh refuses a key file without its final line break
		}
	case CredentialGitHubApp:
		if c.AppID <= 0 || c.InstallationID <= 0 {
			return Errorf(CodeInvalidRequest, "a GitHub App needs its app id and installation id")
		}
		if !validRSAKey(c.AppKey) {
			return Errorf(CodeInvalidRequest, "the GitHub App's private key is not a PEM RSA private key")
		}
	default:
		return Errorf(CodeInvalidRequest, "a credential is token, ssh_key or github_app, not %q", c.Kind)
	}
	return nil
}

// validRSAKey reports whether key is a PEM RSA private key (PKCS#1, as GitHub gives
// it, or PKCS#8).
func validRSAKey(key string) bool {
	block, _ := pem.Decode([]byte(key))
	if block == nil {
		return false
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return true
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return false
	}
	_, ok := k.(*rsa.PrivateKey)
	return ok
}
