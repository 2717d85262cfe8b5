package core

import (
	"net/url"
	"strings"
)

// RepositoryKey is a repository URL as forge events and projects are matched on:
// host/owner/name in lower case, the same for its https, ssh and scp-like URLs, with or
// without ".git", credentials or a port ("" when it names no repository). A forge's
// ssh port differs from its web port, and events name the web's: the port is left out.
func RepositoryKey(repo string) string {
	repo = strings.TrimSpace(repo)
	var host, path string
	if u, err := url.Parse(repo); err == nil && u.Host != "" {
		host, path = u.Hostname(), u.Path
	} else if at := strings.Index(repo, "@"); at >= 0 && !strings.Contains(repo, "://") {
		// scp-like: git@host:owner/name.git
		h, p, ok := strings.Cut(repo[at+1:], ":")
		if !ok {
			return ""
		}
		host, path = h, p
	} else {
		return ""
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	if host == "" || !strings.Contains(path, "/") {
		return ""
	}
	return strings.ToLower(host + "/" + path)
}
