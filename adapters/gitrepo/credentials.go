package gitrepo

import "strings"

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
}

// tokenHelper answers git's credential "get" from the environment git was given; the
// token is not on any command line (ps shows those).
const tokenHelper = `!f() { test "$1" = get && printf 'username=%s\npassword=%s\n' "$WSHUB_GIT_HTTPS_USER" "$WSHUB_GIT_HTTPS_TOKEN"; }; f`

// args are the configuration the credentials add to a git command line: no credential
// helper from anywhere else, then the token's.
func (c *Credentials) args() []string {
	if c == nil || c.HTTPSToken == "" {
		return nil
	}
	return []string{"-c", "credential.helper=", "-c", "credential.helper=" + tokenHelper}
}

// env is what the credentials add to git's environment (later entries win).
func (c *Credentials) env() []string {
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
	if c.SSHKeyFile != "" {
		env = append(env, "GIT_SSH_COMMAND=ssh -i '"+strings.ReplaceAll(c.SSHKeyFile, "'", `'\''`)+"' -o IdentitiesOnly=yes -o BatchMode=yes")
	}
	return env
}

func (c *Credentials) token() string {
	if c == nil {
		return ""
	}
	return c.HTTPSToken
}
