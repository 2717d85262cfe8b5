package core

import (
	"strings"
	"testing"
)

func TestRepositoryCredentials(t *testing.T) {
	tests := []struct {
		repo, shown string
		refused     bool
	}{
		{"https://github.com/org/repo.git", "https://github.com/org/repo.git", false},
		{"https://bob:ghp_tok@github.com/org/repo.git", "https://github.com/org/repo.git", true},
		{"https://ghp_tok@github.com/org/repo.git", "https://github.com/org/repo.git", true},
		{"HTTP://x:y@host/r", "http://host/r", true},
		{"ssh://git@github.com/org/repo.git", "ssh://git@github.com/org/repo.git", false},
		{"ssh://git:pw@github.com/org/repo.git", "ssh://git@github.com/org/repo.git", true},
		{"git@github.com:org/repo.git", "git@github.com:org/repo.git", false},
		{"/srv/git/repo", "/srv/git/repo", false},
	}
	for _, tt := range tests {
		err := checkRepositoryCredentials(tt.repo)
		if (err != nil) != tt.refused {
			t.Errorf("%s: expected refused=%v, got %v", tt.repo, tt.refused, err)
		}
		if err != nil && (strings.Contains(err.Error(), "ghp_tok") || strings.Contains(err.Error(), ":pw") || strings.Contains(err.Error(), ":y@")) {
			t.Errorf("%s: the refusal shows the secret: %v", tt.repo, err)
		}
		if got := DisplayRepository(tt.repo); got != tt.shown {
			t.Errorf("%s: expected shown as %q, got %q", tt.repo, tt.shown, got)
		}
	}
}
