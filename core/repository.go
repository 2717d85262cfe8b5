package core

import (
	"net/url"
	"strings"
)

// checkRepositoryCredentials refuses a repository URL that carries a secret: URLs are
// stored, shown in project lists and echoed by git in its errors. An https remote takes
// the hub's token instead (WSHUB_GIT_HTTPS_TOKEN); an ssh remote names its user
// (ssh://git@host/...) but never a password, and takes a deploy key
// (WSHUB_GIT_SSH_KEY_FILE). Local paths and scp-like addresses (git@host:org/repo)
// have no place for a secret.
func checkRepositoryCredentials(repo string) error {
	u, err := url.Parse(repo)
	if err != nil || u.Scheme == "" || u.User == nil {
		return nil
	}
	_, hasPassword := u.User.Password()
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "http" || scheme == "https":
		// Not even the user name is repeated: a token is often given as one.
		return Errorf(CodeInvalidRequest, "the repository URL must not carry credentials: "+
			"add %s and give the hub the token with WSHUB_GIT_HTTPS_TOKEN or WSHUB_GIT_HTTPS_TOKEN_FILE", DisplayRepository(repo))
	case hasPassword:
		return Errorf(CodeInvalidRequest, "the repository URL must not carry a password: "+
			"add %s and give the hub a deploy key with WSHUB_GIT_SSH_KEY_FILE", DisplayRepository(repo))
	}
	return nil
}

// DisplayRepository is a repository as it is shown (API, operator commands): without
// credentials, whatever was stored before they were refused.
func DisplayRepository(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.Scheme == "" || u.User == nil {
		return repo
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		u.User = nil
	default:
		u.User = url.User(u.User.Username())
	}
	return u.String()
}
