package github

import (
	"errors"
	"testing"

	"github.com/wshub/wshub/core"
)

func TestTheAPIBaseIsDerivedFromTheRepositoryURL(t *testing.T) {
	for _, c := range []struct {
		repository, base, owner, name string
	}{
		{"https://github.com/acme/widgets.git", "https://api.github.com/", "acme", "widgets"},
		{"https://github.com/acme/widgets", "https://api.github.com/", "acme", "widgets"},
		{"https://GitHub.com/acme/widgets/", "https://api.github.com/", "acme", "widgets"},
		{"git@github.com:acme/widgets.git", "https://api.github.com/", "acme", "widgets"},
		{"ssh://git@github.com/acme/widgets.git", "https://api.github.com/", "acme", "widgets"},
		{"ssh://git@github.com:22/acme/widgets.git", "https://api.github.com/", "acme", "widgets"},
		{"https://ghe.example.com/acme/widgets.git", "https://ghe.example.com/api/v3/", "acme", "widgets"},
		{"https://ghe.example.com:8443/acme/widgets.git", "https://ghe.example.com:8443/api/v3/", "acme", "widgets"},
		{"git@ghe.example.com:acme/widgets.git", "https://ghe.example.com/api/v3/", "acme", "widgets"},
		{"ssh://git@ghe.example.com:2222/acme/widgets.git", "https://ghe.example.com/api/v3/", "acme", "widgets"},
		{"https://octocorp.ghe.com/acme/widgets.git", "https://api.octocorp.ghe.com/", "acme", "widgets"},
		{"http://127.0.0.1:8080/acme/widgets.git", "http://127.0.0.1:8080/api/v3/", "acme", "widgets"},
		{"http://localhost/acme/widgets.git", "http://localhost/api/v3/", "acme", "widgets"},
	} {
		base, owner, name, err := locate(c.repository)
		if err != nil || base != c.base || owner != c.owner || name != c.name {
			t.Errorf("%s: expected %s with %s/%s, got %s with %s/%s (%v)", c.repository, c.base, c.owner, c.name, base, owner, name, err)
		}
	}
}

func TestARepositoryURLWithoutAGitHubRepositoryIsRefused(t *testing.T) {
	for _, repository := range []string{
		"http://ghe.example.com/acme/widgets.git", // a token would travel in clear
		"https://github.com/acme",
		"https://github.com/acme/widgets/extra",
		"https://github.com/acme/../widgets",
		"/srv/git/widgets.git",
		"file:///srv/git/acme/widgets.git",
		"widgets",
	} {
		_, _, _, err := locate(repository)
		var r *core.ForgeRefusal
		if !errors.As(err, &r) || r.Status != 0 || r.Reason == "" {
			t.Errorf("%s: expected a refusal in words, got %v", repository, err)
		}
	}
}
