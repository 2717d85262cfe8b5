package core

import (
	"strings"
	"testing"
)

// The app takes https and ssh remotes on public hosts only, and says which credential
// each takes; everything else is refused in words.
func TestAppRepositoryTakesHTTPSAndSSHRemotesOnPublicHostsOnly(t *testing.T) {
	strict := WebhookURLPolicy{PublicHost: "hub.example.com"}
	dev := WebhookURLPolicy{AllowInsecure: true}
	tests := []struct {
		policy     WebhookURLPolicy
		repo, kind string
		refused    string
	}{
		{strict, "https://github.com/org/repo.git", CredentialToken, ""},
		{strict, " https://gitlab.example.org:8443/group/sub/repo ", CredentialToken, ""},
		{strict, "ssh://git@github.com/org/repo.git", CredentialSSHKey, ""},
		{strict, "git@github.com:org/repo.git", CredentialSSHKey, ""},
		{strict, "github.com:org/repo.git", CredentialSSHKey, ""},
		{strict, "", "", "is required"},
		{strict, "/srv/git/repo", "", "path on the hub's disk"},
		{strict, "./repo", "", "path on the hub's disk"},
		{strict, "repo", "", "path on the hub's disk"},
		{strict, "file:///srv/git/repo", "", "path on the hub's disk"},
		{strict, "ext::sh -c touch% /tmp/x", "", "is not a URL"},
		{strict, "ext::git-remote-x", "", "fully qualified"},
		{strict, "git://github.com/org/repo.git", "", "not git://"},
		{strict, "http://github.com/org/repo.git", "", "must use https"},
		{strict, "https://x:tok@github.com/org/repo.git", "", "must not carry credentials"},
		{strict, "ssh://git:pw@github.com/org/repo.git", "", "must not carry a password"},
		{strict, "https://127.0.0.1/org/repo.git", "", "not an IP address"},
		{strict, "https://[::1]/org/repo.git", "", "not an IP address"},
		{strict, "https://localhost/org/repo.git", "", "public host"},
		{strict, "git@metadata.internal:org/repo.git", "", "public host"},
		{strict, "git@gitserver:org/repo.git", "", "fully qualified"},
		{strict, "https://hub.example.com/org/repo.git", "", "this hub"},
		{strict, "ssh://-oProxyCommand=x.example.com/repo", "", "invalid host"},
		{strict, "https://github.com", "", "name a repository"},
		{strict, "https://github.com:0/org/repo", "", "port from 1 to 65535"},
		{strict, "http://127.0.0.1:3000/org/repo.git", "", "must use https"},
		{dev, "http://127.0.0.1:3000/org/repo.git", CredentialToken, ""},
		{dev, "http://10.0.0.5/org/repo.git", "", "must use https"},
	}
	for _, tc := range tests {
		repo, kind, err := tc.policy.appRepository(tc.repo)
		if tc.refused == "" {
			if err != nil || kind != tc.kind || repo != strings.TrimSpace(tc.repo) {
				t.Errorf("%q: expected it taken with a %s, got %q %q %v", tc.repo, tc.kind, repo, kind, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.HasPrefix(err.Error(), "invalid_request: the repository URL ") {
			t.Errorf("%q: expected it refused saying %q, got %q %v", tc.repo, tc.refused, kind, err)
		}
	}
}
