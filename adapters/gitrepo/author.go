package gitrepo

import (
	"fmt"
	"net/mail"
	"strings"
)

// Author is who the hub's commits of a turn's work are by (git's user.name and
// user.email): a setting (WSHUB_COMMIT_AUTHOR), the same for every workspace.
type Author struct {
	Name, Email string
}

// DefaultAuthor is the author when none is set.
var DefaultAuthor = Author{Name: "wshub", Email: "wshub@localhost"}

// ParseAuthor reads "Name <email>" (an RFC 5322 address, as git writes authors); ""
// is DefaultAuthor.
func ParseAuthor(s string) (Author, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultAuthor, nil
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name == "" || strings.ContainsAny(a.Name+a.Address, "<>\n\x00") {
		return Author{}, fmt.Errorf("a commit author is written Name <email>, as git shows it; got %q", s)
	}
	return Author{Name: a.Name, Email: a.Address}, nil
}

func (a Author) String() string { return a.Name + " <" + a.Email + ">" }

// env is the author as git's environment: it wins over the checkout's config,
// whatever the agent wrote there.
func (a Author) env() []string {
	if a.Name == "" {
		a = DefaultAuthor
	}
	return []string{"GIT_AUTHOR_NAME=" + a.Name, "GIT_AUTHOR_EMAIL=" + a.Email,
		"GIT_COMMITTER_NAME=" + a.Name, "GIT_COMMITTER_EMAIL=" + a.Email}
}
