package gitrepo

import (
	"slices"
	"strings"
	"testing"
)

func TestLastLineAndRedaction(t *testing.T) {
	r := redactor{
		dir:        "/var/lib/wshub/mirrors",
		mirror:     "/var/lib/wshub/mirrors/prj_1.git",
		tmp:        "/var/lib/wshub/mirrors/.tmp-prj_1-123",
		repository: "https://bot:s3cret@example.com/org/repo.git",
	}
	tests := []struct {
		name   string
		stderr string
		want   string
	}{
		{"last line, prefix dropped", "Cloning into bare repository '/var/lib/wshub/mirrors/.tmp-prj_1-123'...\nfatal: repository 'https://example.com/x' not found\n",
			"repository 'https://example.com/x' not found"},
		{"temp path", "fatal: could not create leading directories of '/var/lib/wshub/mirrors/.tmp-prj_1-123': Permission denied",
			"could not create leading directories of '<mirror>': Permission denied"},
		{"mirror path", "error: cannot lock ref in /var/lib/wshub/mirrors/prj_1.git", "cannot lock ref in <mirror>"},
		{"mirrors dir", "fatal: /var/lib/wshub/mirrors is full", "<mirrors> is full"},
		{"credentials", "fatal: unable to access 'https://bot:s3cret@example.com/org/repo.git/': Could not resolve host: example.com",
			"unable to access 'https://***@example.com/org/repo.git/': Could not resolve host: example.com"},
		{"advice after fatal", "fatal: unable to access 'x'\nhint: try this\n", "unable to access 'x'"},
		{"ssh", "ssh: Could not resolve hostname nowhere: Name or service not known\r\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n",
			"could not read from remote repository: ssh: Could not resolve hostname nowhere: Name or service not known"},
		{"no prefix", "something odd\n", "something odd"},
		{"long", strings.Repeat("x", 1000), strings.Repeat("x", maxReason-1) + "…"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.apply(lastLine(tt.stderr)); got != tt.want {
				t.Errorf("reason: expected %q, got %q", tt.want, got)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	tests := []struct{ repo, want string }{
		{"https://user:pass@host/r.git", "user:pass"},
		{"http://token@host/r.git", "token"},
		{"https://host/r.git", ""},
		{"https://host/path@thing", ""},
		{"ssh://git@host/r.git", ""},
		{"git@host:r.git", ""},
		{"/srv/repo", ""},
	}
	for _, tt := range tests {
		if got := credentials(tt.repo); got != tt.want {
			t.Errorf("credentials(%q): expected %q, got %q", tt.repo, tt.want, got)
		}
	}
}

func TestGitEnv(t *testing.T) {
	env := gitEnv([]string{"PATH=/bin", "GIT_DIR=/elsewhere", "GIT_TERMINAL_PROMPT=1", "HOME=/home/hub",
		"DATABASE_URL=postgres://hub:secret@db/wshub", "WSHUB_CONTENT_KEY=c2VjcmV0", "PGPASSWORD=secret",
		"SSH_AUTH_SOCK=/run/ssh-agent", "GIT_CONFIG_GLOBAL=/home/hub/.gitconfig"}, false)
	want := []string{"PATH=/bin", "SSH_AUTH_SOCK=/run/ssh-agent",
		"HOME=/nonexistent", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	if !slices.Equal(env, want) {
		t.Errorf("env:\nexpected %q\n     got %q", want, env)
	}
}

func TestHeadSymref(t *testing.T) {
	tests := []struct{ out, want string }{
		{"ref: refs/heads/trunk\tHEAD\nabc123\tHEAD\n", "refs/heads/trunk"},
		{"abc123\tHEAD\n", ""},
		{"", ""},
		{"ref: refs/tags/v1\tHEAD\n", ""},
	}
	for _, tt := range tests {
		if got := headSymref(tt.out); got != tt.want {
			t.Errorf("headSymref(%q): expected %q, got %q", tt.out, tt.want, got)
		}
	}
}
