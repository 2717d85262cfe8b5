package forge

import (
	"encoding/json"
	"testing"

	gh "github.com/google/go-github/v89/github"
	gl "gitlab.com/gitlab-org/api/client-go/v2"
)

// What is a new issue comment by a person, as the forges' client libraries type their
// deliveries: a comment on a pull request, one a bot wrote, an edited note, a comment
// edited are not.
func TestOnlyNewIssueCommentsOfPeopleAreRequests(t *testing.T) {
	hub := func(action, userType string, pull bool) []byte {
		issue := &gh.Issue{Number: gh.Ptr(3), Title: gh.Ptr("t")}
		if pull {
			issue.PullRequestLinks = &gh.PullRequestLinks{URL: gh.Ptr("https://api.github.com/repos/o/r/pulls/3")}
		}
		b, _ := json.Marshal(gh.IssueCommentEvent{Action: gh.Ptr(action), Issue: issue,
			Comment: &gh.IssueComment{ID: gh.Ptr(int64(9)), Body: gh.Ptr("@wshub go"), User: &gh.User{Login: gh.Ptr("u"), Type: gh.Ptr(userType)}},
			Repo:    &gh.Repository{HTMLURL: gh.Ptr("https://github.com/o/r")}})
		return b
	}
	lab := func(action gl.CommentEventAction, noteable string) []byte {
		b, _ := json.Marshal(gl.IssueCommentEvent{ObjectKind: "note", User: &gl.User{ID: 4, Username: "u"},
			Project:          gl.IssueCommentEventProject{WebURL: "https://gitlab.com/o/r"},
			ObjectAttributes: gl.IssueCommentEventObjectAttributes{ID: 9, Note: "@wshub go", NoteableType: noteable, Action: action},
			Issue:            gl.IssueCommentEventIssue{IID: 3, Title: "t"}})
		return b
	}
	for _, tt := range []struct {
		what, kind, event string
		body              []byte
		request, bot      bool
	}{
		{"a person's new issue comment", "github", "issue_comment", hub("created", "User", false), true, false},
		{"a bot's", "github", "issue_comment", hub("created", "Bot", false), true, true},
		{"an edited one", "github", "issue_comment", hub("edited", "User", false), false, false},
		{"one on a pull request", "github", "issue_comment", hub("created", "User", true), false, false},
		{"another event", "github", "issues", hub("created", "User", false), false, false},
		{"Gitea's, shaped as GitHub's", "gitea", "issue_comment", hub("created", "", false), true, false},
		{"a new GitLab note on an issue", "gitlab", "Note Hook", lab(gl.CommentEventActionCreate, "Issue"), true, false},
		{"an updated note", "gitlab", "Note Hook", lab("update", "Issue"), false, false},
		{"a note on a merge request", "gitlab", "Note Hook", lab(gl.CommentEventActionCreate, "MergeRequest"), false, false},
	} {
		ev, err := parse(tt.kind, tt.event, tt.body)
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		if ev.NewIssueComment != tt.request || ev.Bot != tt.bot || ev.Issue != 3 || ev.Comment != "@wshub go" {
			t.Errorf("%s: expected request %v bot %v on issue 3, got %+v", tt.what, tt.request, tt.bot, ev)
		}
	}
}

// The handle is a word of its own, in any case; the request is the comment without it.
func TestTheHandleIsAWordOfItsOwn(t *testing.T) {
	for _, tt := range []struct {
		comment, prompt string
		asked           bool
	}{
		{"@wshub write the tests", "write the tests", true},
		{"Please, @WSHUB: fix it", "Please, : fix it", true},
		{"mail @wshub-team about it", "", false},
		{"ask me@wshub", "", false},
		{"no handle here", "", false},
		{"@wshubber then @wshub go", "@wshubber then  go", true},
	} {
		prompt, asked := request(tt.comment, "@wshub")
		if prompt != tt.prompt || asked != tt.asked {
			t.Errorf("%q: expected %q %v, got %q %v", tt.comment, tt.prompt, tt.asked, prompt, asked)
		}
	}
}
