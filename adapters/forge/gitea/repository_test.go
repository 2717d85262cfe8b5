package gitea

import (
	"errors"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

func TestRepositoryURLNamesGiteaAndTheRepository(t *testing.T) {
	for _, tc := range []struct {
		url, api, owner, name string
	}{
		{"https://gitea.example.org/org/repo.git", "https://gitea.example.org", "org", "repo"},
		{"https://gitea.example.org:3000/org/repo", "https://gitea.example.org:3000", "org", "repo"},
		{"https://codeberg.org/forgejo/forgejo.git", "https://codeberg.org", "forgejo", "forgejo"},
		// Served under a subpath (ROOT_URL https://example.org/git/).
		{"https://example.org/git/org/repo.git", "https://example.org/git", "org", "repo"},
		{"https://example.org/a/b/org/repo.git/", "https://example.org/a/b", "org", "repo"},
		// Userinfo is dropped: the token comes from Forge.Token.
		{"https://oauth2@gitea.example.org/org/repo.git", "https://gitea.example.org", "org", "repo"},
		// ssh: the API is on the same host over https, whatever the ssh port.
		{"git@gitea.example.org:org/repo.git", "https://gitea.example.org", "org", "repo"},
		{"ssh://git@gitea.example.org:2222/org/repo.git", "https://gitea.example.org", "org", "repo"},
		// Plain http to this machine only (a test's Gitea).
		{"http://127.0.0.1:3000/org/repo.git", "http://127.0.0.1:3000", "org", "repo"},
		{"http://[::1]:3000/org/repo.git", "http://[::1]:3000", "org", "repo"},
	} {
		r, err := locate(tc.url)
		if err != nil {
			t.Errorf("%s: want %s %s/%s, got %v", tc.url, tc.api, tc.owner, tc.name, err)
			continue
		}
		if r.api != tc.api || r.owner != tc.owner || r.name != tc.name {
			t.Errorf("%s: want %s %s/%s, got %s %s/%s", tc.url, tc.api, tc.owner, tc.name, r.api, r.owner, r.name)
		}
	}
}

func TestRepositoryURLThatNamesNoGiteaIsRefusedInWords(t *testing.T) {
	for _, tc := range []struct{ url, words string }{
		{"http://gitea.example.org/org/repo.git", "in clear"},
		{"https://gitea.example.org/repo.git", "does not name a repository"},
		{"/srv/git/org/repo.git", "is not a URL"},
	} {
		_, err := locate(tc.url)
		var refusal *core.ForgeRefusal
		if !errors.As(err, &refusal) || refusal.Status != 0 || !strings.Contains(refusal.Reason, tc.words) {
			t.Errorf("%s: want a refusal (status 0) saying %q, got %v", tc.url, tc.words, err)
		}
	}
}

func TestRefusalReasonIsOneShortLineWithoutTheToken(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\nb\r\n  c\t d", "a b c d"},
		{"sent tok-123 back", "sent [token] back"},
	} {
		if got := scrub(tc.in, "tok-123"); got != tc.want {
			t.Errorf("scrub(%q): want %q, got %q", tc.in, tc.want, got)
		}
	}
	long := strings.Repeat("é", maxReason)
	got := scrub(long, "tok-123")
	if len(got) > maxReason+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("scrub of %d bytes: want at most %d and an ellipsis, got %d: %q", len(long), maxReason, len(got), got[len(got)-10:])
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("scrub cut a character in two: %q", got[len(got)-10:])
	}
}

func TestDraftIsGiteasWorkInProgressPrefix(t *testing.T) {
	for title, want := range map[string]bool{
		"WIP: add x": true, "wip: add x": true, "[WIP] add x": true,
		"add x": false, "Wipe the cache": false, "add WIP: x": false, " WIP: add x": false,
	} {
		if got := isWIP(title); got != want {
			t.Errorf("isWIP(%q): want %v, got %v", title, want, got)
		}
	}
}
