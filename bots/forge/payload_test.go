package forge

import (
	"bytes"
	"encoding/json"
	"slices"
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

// On a pull request, as the forges' client libraries type their deliveries (Gitea's
// as its webhook structs render them): a review's line comment (with its place) and
// a submitted review's summary are reviews, a comment in the conversation is not;
// edits and other actions are nothing.
func TestPullRequestCommentsAndReviewsAreRead(t *testing.T) {
	repo := &gh.Repository{HTMLURL: gh.Ptr("https://github.com/o/r")}
	user := &gh.User{Login: gh.Ptr("u"), Type: gh.Ptr("User")}
	pull := &gh.PullRequest{Number: gh.Ptr(5)}
	ghReviewComment := func(action string) []byte {
		b, _ := json.Marshal(gh.PullRequestReviewCommentEvent{Action: gh.Ptr(action), PullRequest: pull, Repo: repo,
			Comment: &gh.PullRequestComment{ID: gh.Ptr(int64(9)), Body: gh.Ptr("rename it"), Path: gh.Ptr("src/app.go"),
				Line: gh.Ptr(12), OriginalLine: gh.Ptr(10), User: user}})
		return b
	}
	ghReview := func(action string) []byte {
		b, _ := json.Marshal(gh.PullRequestReviewEvent{Action: gh.Ptr(action), PullRequest: pull, Repo: repo,
			Review: &gh.PullRequestReview{ID: gh.Ptr(int64(9)), Body: gh.Ptr("rename it"), State: gh.Ptr("commented"), User: user}})
		return b
	}
	ghComment, _ := json.Marshal(gh.IssueCommentEvent{Action: gh.Ptr("created"), Repo: repo,
		Issue:   &gh.Issue{Number: gh.Ptr(5), PullRequestLinks: &gh.PullRequestLinks{URL: gh.Ptr("https://api.github.com/repos/o/r/pulls/5")}},
		Comment: &gh.IssueComment{ID: gh.Ptr(int64(9)), Body: gh.Ptr("rename it"), User: user}})
	// Gitea's PullRequestPayload of a review (action "reviewed", the sender its author,
	// the review without an id) and its IssueCommentPayload of a pull request's comment.
	giteaReview := []byte(`{"action":"reviewed","number":5,"pull_request":{"number":5},
		"review":{"type":"pull_request_review_approved","content":"rename it"},
		"sender":{"id":4,"login":"u"},"repository":{"html_url":"https://gitea.example/o/r"}}`)
	giteaComment := []byte(`{"action":"created","is_pull":true,"issue":{"number":5,"pull_request":{"merged":false}},
		"comment":{"id":9,"body":"rename it","user":{"id":4,"login":"u"}},"repository":{"html_url":"https://gitea.example/o/r"}}`)
	lab := func(action gl.CommentEventAction, noteType string, pos *gl.NotePosition) []byte {
		b, _ := json.Marshal(gl.MergeCommentEvent{ObjectKind: "note", User: &gl.EventUser{ID: 4, Username: "u"},
			Project: gl.MergeCommentEventProject{WebURL: "https://gitlab.com/o/r"},
			ObjectAttributes: gl.MergeCommentEventObjectAttributes{ID: 9, Note: "rename it", NoteableType: "MergeRequest",
				Action: action, Type: noteType, Position: pos},
			MergeRequest: gl.MergeCommentEventMergeRequest{IID: 5}})
		return b
	}
	onLine := &gl.NotePosition{PositionType: "text", NewPath: "src/app.go", NewLine: 12}
	onRemoved := &gl.NotePosition{PositionType: "text", OldPath: "src/old.go", OldLine: 3}
	for _, tt := range []struct {
		what, kind, event string
		body              []byte
		pull              int64
		review            bool
		path              string
		line              int64
	}{
		{"GitHub's line comment", "github", "pull_request_review_comment", ghReviewComment("created"), 5, true, "src/app.go", 12},
		{"an edited line comment", "github", "pull_request_review_comment", ghReviewComment("edited"), 0, false, "", 0},
		{"GitHub's submitted review", "github", "pull_request_review", ghReview("submitted"), 5, true, "", 0},
		{"a dismissed review", "github", "pull_request_review", ghReview("dismissed"), 0, false, "", 0},
		{"GitHub's comment on a pull request", "github", "issue_comment", ghComment, 5, false, "", 0},
		{"Gitea's review", "gitea", "pull_request_review_approved", giteaReview, 5, true, "", 0},
		{"an older Gitea's comment review", "gitea", "pull_request_comment", giteaReview, 5, true, "", 0},
		{"Gitea's comment on a pull request", "gitea", "pull_request_comment", giteaComment, 5, false, "", 0},
		{"Gitea's, as an issue comment", "gitea", "issue_comment", giteaComment, 5, false, "", 0},
		{"GitLab's note on a line", "gitlab", "Note Hook", lab(gl.CommentEventActionCreate, "DiffNote", onLine), 5, true, "src/app.go", 12},
		{"on a removed line", "gitlab", "Note Hook", lab(gl.CommentEventActionCreate, "DiffNote", onRemoved), 5, true, "src/old.go", 3},
		{"GitLab's note in a merge request", "gitlab", "Note Hook", lab(gl.CommentEventActionCreate, "DiscussionNote", nil), 5, false, "", 0},
		{"an updated note", "gitlab", "Note Hook", lab("update", "DiffNote", onLine), 0, false, "", 0},
	} {
		ev, err := parse(tt.kind, tt.event, tt.body)
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		if ev.Pull != tt.pull || ev.Review != tt.review || ev.Path != tt.path || ev.Line != tt.line || ev.NewIssueComment {
			t.Errorf("%s: expected pull %d review %v at %q line %d, got %+v", tt.what, tt.pull, tt.review, tt.path, tt.line, ev)
		}
		if tt.pull != 0 && (ev.Comment != "rename it" || ev.Login != "u" || ev.Kind == "") {
			t.Errorf("%s: expected u's words \"rename it\" under a key, got %+v", tt.what, ev)
		}
	}
	// Two of Gitea's reviews, which come without an id, are told apart by their
	// deliveries; the same delivery again is the same review.
	other := bytes.Replace(giteaReview, []byte("rename it"), []byte("and test it"), 1)
	a, _ := parse("gitea", "pull_request_review_approved", giteaReview)
	again, _ := parse("gitea", "pull_request_review_approved", giteaReview)
	b, _ := parse("gitea", "pull_request_review_approved", other)
	if a.Kind != again.Kind || a.Kind == b.Kind {
		t.Errorf("expected one key per review, got %q, %q again, and %q for another", a.Kind, again.Kind, b.Kind)
	}
}

// The labels just given to an issue, and who gave them: GitHub's "labeled" names the
// label, GitLab's Issue Hook the labels before and after, Gitea's "label_updated" the
// issue's labels after. Labels taken away and pull requests' labels give none.
func TestTheLabelsGivenToAnIssueAreRead(t *testing.T) {
	sender := &gh.User{Login: gh.Ptr("u"), ID: gh.Ptr(int64(4))}
	hub := func(action string, pull bool) []byte {
		issue := &gh.Issue{Number: gh.Ptr(3), Title: gh.Ptr("t"), Body: gh.Ptr("b")}
		if pull {
			issue.PullRequestLinks = &gh.PullRequestLinks{URL: gh.Ptr("https://api.github.com/repos/o/r/pulls/3")}
		}
		b, _ := json.Marshal(gh.IssuesEvent{Action: gh.Ptr(action), Issue: issue, Label: &gh.Label{Name: gh.Ptr("wshub")},
			Sender: sender, Repo: &gh.Repository{HTMLURL: gh.Ptr("https://github.com/o/r")}})
		return b
	}
	lab := func(previous, current []string) []byte {
		labels := func(names []string) []*gl.EventLabel {
			var out []*gl.EventLabel
			for i, n := range names {
				out = append(out, &gl.EventLabel{ID: int64(i + 1), Title: n})
			}
			return out
		}
		ev := gl.IssueEvent{ObjectKind: "issue", User: &gl.EventUser{ID: 4, Username: "u"},
			Project:          gl.IssueEventProject{WebURL: "https://gitlab.com/o/r"},
			ObjectAttributes: gl.IssueEventObjectAttributes{IID: 3, Title: "t", Description: "b", Action: "update"}}
		ev.Changes.Labels.Previous, ev.Changes.Labels.Current = labels(previous), labels(current)
		b, _ := json.Marshal(ev)
		return b
	}
	gitea := []byte(`{"action":"label_updated","number":3,"issue":{"number":3,"title":"t","body":"b",
		"labels":[{"id":1,"name":"bug"},{"id":2,"name":"wshub"}]},"sender":{"id":4,"login":"u"},
		"repository":{"html_url":"https://gitea.example/o/r"}}`)
	for _, tt := range []struct {
		what, kind, event string
		body              []byte
		labeled           []string
	}{
		{"GitHub's labeled", "github", "issues", hub("labeled", false), []string{"wshub"}},
		{"GitHub's unlabeled", "github", "issues", hub("unlabeled", false), nil},
		{"a pull request labeled", "github", "issues", hub("labeled", true), nil},
		{"GitLab's label added", "gitlab", "Issue Hook", lab([]string{"bug"}, []string{"bug", "wshub"}), []string{"wshub"}},
		{"GitLab's label taken away", "gitlab", "Issue Hook", lab([]string{"bug", "wshub"}, []string{"wshub"}), nil},
		{"GitLab's issue changed otherwise", "gitlab", "Issue Hook", lab(nil, nil), nil},
		{"Gitea's labels updated", "gitea", "issue_label", gitea, []string{"bug", "wshub"}},
	} {
		ev, err := parse(tt.kind, tt.event, tt.body)
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		if !slices.Equal(ev.Labeled, tt.labeled) {
			t.Errorf("%s: expected the labels %q given, got %q", tt.what, tt.labeled, ev.Labeled)
		}
		if tt.labeled != nil && (ev.Issue != 3 || ev.Title != "t" || ev.Body != "b" || ev.Login != "u" || ev.UserID != 4) {
			t.Errorf("%s: expected issue 3 labelled by u, got %+v", tt.what, ev)
		}
	}
}

// A line comment's review thread, its author's profile page and a GitHub App's
// installation are read as the client libraries type them: a reply's thread is its
// first comment's; a GitHub user without html_url has their page at the root of the
// repository's forge; GitLab's is the project's GitLab's.
func TestReviewThreadsProfilesAndInstallationsAreRead(t *testing.T) {
	review, _ := json.Marshal(gh.PullRequestReviewCommentEvent{Action: gh.Ptr("created"), PullRequest: &gh.PullRequest{Number: gh.Ptr(2)},
		Repo:         &gh.Repository{HTMLURL: gh.Ptr("https://ghe.example.com/o/r")},
		Installation: &gh.Installation{ID: gh.Ptr(int64(77))},
		Comment: &gh.PullRequestComment{ID: gh.Ptr(int64(12)), InReplyTo: gh.Ptr(int64(10)), Body: gh.Ptr("and here"), Path: gh.Ptr("a.go"),
			Line: gh.Ptr(4), User: &gh.User{Login: gh.Ptr("Octo")}}})
	e, err := parse("github", "pull_request_review_comment", review)
	if err != nil || e.Thread != "10" || e.Profile != "https://ghe.example.com/Octo" || e.Installation != 77 {
		t.Errorf("expected thread 10, Octo's page on the GitHub Enterprise and installation 77, got %+v (%v)", e, err)
	}
	a := gl.MergeCommentEventObjectAttributes{ID: 9, Note: "why", NoteableType: "MergeRequest", Action: gl.CommentEventActionCreate,
		Type: "DiffNote", DiscussionID: "abc123", Position: &gl.NotePosition{NewPath: "a.go", NewLine: 4}}
	note, _ := json.Marshal(gl.MergeCommentEvent{ObjectKind: "note", User: &gl.EventUser{ID: 5, Username: "tanuki"},
		Project: gl.MergeCommentEventProject{WebURL: "https://gitlab.example.com/g/r"}, ObjectAttributes: a,
		MergeRequest: gl.MergeCommentEventMergeRequest{IID: 2}})
	if e, err := parse("gitlab", "Note Hook", note); err != nil || e.Thread != "abc123" || e.Profile != "https://gitlab.example.com/tanuki" {
		t.Errorf("expected the discussion abc123 and tanuki's page on that GitLab, got %+v (%v)", e, err)
	}
}
