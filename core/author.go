package core

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
)

// Author kinds: where a person acted from.
const (
	AuthorAPI     = "api"     // an API key: ID is the key's id, Name its name
	AuthorSlack   = "slack"   // ID is the Slack user id, Name their display name
	AuthorDiscord = "discord" // ID is the Discord user id, Name their display name
	AuthorApp     = "app"     // a member in the app: ID is the member's id
	// A forge's person has the forge's kind (ForgeGitHub, ForgeGitLab, ForgeGitea): ID
	// and Name are their login, URL their profile page.

	// AuthorSchedule is a schedule's run: ID is the schedule's id, Name its name. Not
	// a person: it decides no approval.
	AuthorSchedule = "schedule"
)

// maxAuthorName bounds a name as it was shown when the person acted (a chat display
// name is the platform's to choose; the store keeps it as given, cut to this).
const maxAuthorName = 200

// Author is who wrote a message or decided an approval. Name is kept as it was at the
// time, so a conversation reads the same after a person renames themselves.
type Author struct {
	Kind string
	ID   string
	Name string
	// MemberID is the member who acted, when known: always in the app, and for chat
	// when the person linked that chat identity by signing in. Their commit identity
	// comes from it.
	MemberID string
	// Via is the chat identity the store finds the member by ("" kind: none).
	Via Identity
	// URL is the person's profile page, where the platform has one (a forge's).
	URL string
}

// person is the author when a person acted (nil for the hub or a timeout).
func (a Author) person() *Author {
	switch a.Kind {
	case AuthorAPI, AuthorSlack, AuthorDiscord, AuthorApp, ForgeGitHub, ForgeGitLab, ForgeGitea:
		return &a
	}
	return nil
}

// name is the author's name, "" for none.
func (a *Author) name() string {
	if a == nil {
		return ""
	}
	return a.Name
}

// DecidedBy is the approval's decidedBy for this author: "api", "slack:<userId>",
// "discord:<userId>" or "app:<memberId>".
func (a Author) DecidedBy() string {
	switch a.Kind {
	case "":
		return ""
	case AuthorAPI:
		return AuthorAPI
	}
	return a.Kind + ":" + a.ID
}

// keyAuthor is the API key the request was made with.
func keyAuthor(acct *Account) Author {
	return Author{Kind: AuthorAPI, ID: acct.KeyID, Name: acct.KeyName}
}

// authorOf is given, or else the API key the request was made with (nil: neither).
func authorOf(acct *Account, given *Author) *Author {
	if given != nil {
		return given
	}
	if acct.KeyID == "" {
		return nil
	}
	a := keyAuthor(acct)
	return &a
}

// chatAuthor is a chat user at place, with their profile page where the platform
// gives one. Slack user ids are per team, so the identity a member links is the team
// and user together; a forge login is per forge, so its identity is the profile page.
func chatAuthor(place ChatPlace, userID, name, profile string) Author {
	a := Author{Kind: place.Platform, ID: userID, Name: authorName(name, userID)}
	switch place.Platform {
	case PlatformSlack:
		a.Via = Identity{Kind: IdentitySlack, Subject: place.TeamID + ":" + userID}
	case PlatformDiscord:
		a.Via = Identity{Kind: IdentityDiscord, Subject: userID}
	case ForgeGitHub, ForgeGitLab, ForgeGitea:
		if id, err := NewIdentity(place.Platform, profile); err == nil {
			a.Via, a.URL = id, strings.TrimSuffix(strings.TrimSpace(profile), "/")
		}
	}
	return a
}

// authorName is one line of at most maxAuthorName characters; fallback when none is left.
func authorName(name, fallback string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(name, "\uFFFD"))
	name, _ = capRunes(strings.TrimSpace(name), maxAuthorName)
	if name == "" {
		return fallback
	}
	return name
}

// authorBody is an author as a sealed event body keeps it.
type authorBody struct {
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

func bodyOfAuthor(a *Author) *authorBody {
	if a == nil {
		return nil
	}
	return &authorBody{Kind: a.Kind, ID: a.ID, Name: a.Name, URL: a.URL}
}

func (b *authorBody) author() *Author {
	if b == nil {
		return nil
	}
	return &Author{Kind: b.Kind, ID: b.ID, Name: b.Name, URL: b.URL}
}

// actor is who made a change the audit log records.
type actor struct {
	id, name, address string
}

// actor is the session's member, from where the request came.
func (a *AppSession) actor() actor {
	return actor{id: "member:" + a.Member.ID, name: a.Member.Name, address: a.Address}
}

// keyActor is the API key a change was made with.
func keyActor(acct *Account) actor {
	return actor{id: "api:" + acct.KeyID, name: acct.KeyName, address: acct.Address}
}

// audit records the change, in the change's transaction.
func (x actor) audit(ctx context.Context, q Queries, accountID string, at time.Time, action, target, detail string) error {
	return q.InsertAudit(ctx, &AuditEntry{AccountID: accountID, At: at, Actor: x.id, ActorName: x.name, Action: action,
		Target: target, Detail: detail, Address: x.address})
}

// coAuthorOf is the "Name <email>" a turn's commit names in its Co-authored-by
// trailer: the member behind the message's author, by their name and email. "" when
// the author is no member, or the member has no email identity. Failing to read it
// leaves the trailer out rather than the commit.
func coAuthorOf(ctx context.Context, q MemberQueries, m *StoredMessage) (string, error) {
	if m.Author == nil || m.Author.MemberID == "" {
		return "", nil
	}
	mem, err := q.GetMember(ctx, m.Author.MemberID)
	if errors.Is(err, ErrNoRows) {
		return "", nil // removed since
	}
	if err != nil {
		return "", err
	}
	return mem.commitIdentity(), nil
}

// commitIdentity is the member as git names a person, "Name <email>": their name (or
// their address's local part) and their first email identity; "" without an email.
func (m *Member) commitIdentity() string {
	email := ""
	for _, id := range m.Identities {
		if id.Kind == IdentityEmail {
			email = id.Subject
			break
		}
	}
	// A name or address that could break out of the trailer's line or brackets is
	// not used: git would read a different person.
	if email == "" || strings.ContainsAny(email, "<>\n\r\x00 ") {
		return ""
	}
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '<' || r == '>' {
			return -1
		}
		return r
	}, m.Name)
	if name = strings.TrimSpace(name); name == "" {
		name, _, _ = strings.Cut(email, "@")
	}
	return name + " <" + email + ">"
}
