package core

import (
	"net/url"
	"strings"
)

// appRepository checks a repository an owner adds in the app and says which kind of
// credential reaches it: an https remote takes a token, an ssh remote (ssh://... or
// git@host:org/repo) a deploy key. Anything else is refused in words: a local path or
// file:// reads the hub's own disk and another transport may run a helper program,
// which only the operator may allow (wshub admin project add). The host must be a
// public name other than the hub's, as a webhook's; policy.AllowInsecure (tests and
// development) admits http on loopback too. Names are checked, not addresses: git
// dials on its own.
func (p WebhookURLPolicy) appRepository(raw string) (repo, credentialKind string, err error) {
	repo = strings.TrimSpace(raw)
	bad := func(why string) (string, string, error) {
		return "", "", Errorf(CodeInvalidRequest, "the repository URL %s", why)
	}
	if repo == "" {
		return bad("is required")
	}
	if len(repo) > MaxWebhookURLChars {
		return bad("must be at most 2048 characters")
	}
	if strings.ContainsAny(repo, " \t\r\n\x00") || strings.HasPrefix(repo, "-") {
		return bad("is not a URL")
	}
	if !strings.Contains(repo, "://") {
		return p.scpRepository(repo, bad)
	}
	u, err := url.Parse(repo)
	if err != nil || u.Opaque != "" {
		return bad("is not a URL")
	}
	host := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "file":
		return bad("names a path on the hub's disk: such a repository is added by the operator (wshub admin project add)")
	case scheme == "ssh":
		credentialKind = CredentialSSHKey
		if _, hasPassword := u.User.Password(); hasPassword {
			return bad("must not carry a password: give the deploy key in its field")
		}
	case scheme == "https", scheme == "http" && p.AllowInsecure && isLoopbackHost(host):
		credentialKind = CredentialToken
		if u.User != nil {
			return bad("must not carry credentials: give the token in its field")
		}
	case scheme == "http":
		return bad("must use https: over http the token would travel in the clear")
	default:
		return bad("must be https:// or ssh:// (or git@host:path), not " + scheme + "://")
	}
	if why := portProblem(u.Port()); why != "" {
		return bad(why)
	}
	if strings.Trim(u.Path, "/") == "" {
		return bad("must name a repository on its host")
	}
	if p.AllowInsecure && isLoopbackHost(host) {
		return repo, credentialKind, nil // AllowInsecure, checked above
	}
	if why := p.hostProblem(host); why != "" {
		return bad(why)
	}
	return repo, credentialKind, nil
}

// scpRepository checks git's short form of an ssh remote, [user@]host:path; anything
// else without a scheme is a local path.
func (p WebhookURLPolicy) scpRepository(repo string, bad func(string) (string, string, error)) (string, string, error) {
	colon := strings.Index(repo, ":")
	if colon <= 0 || strings.Contains(repo[:colon], "/") {
		return bad("names a path on the hub's disk: such a repository is added by the operator (wshub admin project add); " +
			"from here give an https:// or ssh:// URL, or git@host:path")
	}
	host := repo[:colon]
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	if strings.Trim(repo[colon+1:], "/") == "" {
		return bad("must name a repository on its host")
	}
	if why := p.hostProblem(strings.TrimRight(strings.ToLower(host), ".")); why != "" {
		return bad(why)
	}
	return repo, CredentialSSHKey, nil
}
