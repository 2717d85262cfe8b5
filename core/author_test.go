package core

import (
	"strings"
	"testing"
)

// A member is named in a commit's trailer only with a name and address git reads as
// one person: nothing in them can end the line or the brackets.
func TestCommitIdentityIsOnePersonOnOneLine(t *testing.T) {
	email := Identity{Kind: IdentityEmail, Subject: "ada@example.com"}
	for _, c := range []struct {
		name string
		ids  []Identity
		want string
	}{
		{"Ada Lovelace", []Identity{email}, "Ada Lovelace <ada@example.com>"},
		{"", []Identity{email}, "ada <ada@example.com>"},
		{"Ada <x@evil.example>\nCo-authored-by: Eve", []Identity{email}, "Ada x@evil.exampleCo-authored-by: Eve <ada@example.com>"},
		{"Ada", []Identity{{Kind: IdentitySlack, Subject: "T1:U1"}}, ""},
		{"Ada", []Identity{{Kind: IdentityEmail, Subject: "a b@example.com"}}, ""},
	} {
		if got := (&Member{Name: c.name, Identities: c.ids}).commitIdentity(); got != c.want {
			t.Errorf("%q %v: got %q, want %q", c.name, c.ids, got, c.want)
		}
	}
	msg := TurnCommitMessage("fix the build\nplease", "turn_1", "ws_1", "Ada Lovelace <ada@example.com>")
	if want := "fix the build\n\nwshub turn turn_1 in workspace ws_1\n\nCo-authored-by: Ada Lovelace <ada@example.com>"; msg != want {
		t.Errorf("got %q, want %q", msg, want)
	}
	if msg := TurnCommitMessage("fix", "turn_1", "ws_1", ""); strings.Contains(msg, "Co-authored-by") {
		t.Errorf("expected no trailer without a co-author, got %q", msg)
	}
}

// A chat display name is kept as one line, cut to its bound; none falls back to the id.
func TestAuthorNamesAreOneBoundedLine(t *testing.T) {
	a := chatAuthor(ChatPlace{Platform: PlatformSlack, TeamID: "T1"}, "U1", " Grace\n\tHopper\x00 ", "")
	if a.Name != "Grace  Hopper" || a.Via != (Identity{Kind: IdentitySlack, Subject: "T1:U1"}) || a.DecidedBy() != "slack:U1" {
		t.Errorf("got %+v", a)
	}
	if a := chatAuthor(ChatPlace{Platform: PlatformDiscord}, "42", "", ""); a.Name != "42" || a.Via.Subject != "42" {
		t.Errorf("expected the id as the name when the platform gave none, got %+v", a)
	}
	if long := authorName(strings.Repeat("é", 300), "x"); len([]rune(long)) != maxAuthorName {
		t.Errorf("expected a long name cut to %d characters, got %d", maxAuthorName, len([]rune(long)))
	}
	if (Author{}).DecidedBy() != "" || (Author{Kind: AuthorAPI, ID: "key_1"}).DecidedBy() != "api" {
		t.Errorf("expected no decider for a timeout and \"api\" for a key")
	}
}
