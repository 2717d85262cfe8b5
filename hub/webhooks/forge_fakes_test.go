package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"
	gl "gitlab.com/gitlab-org/api/client-go/v2"

	forgebot "github.com/wshub/wshub/bots/forge"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
	glfake "github.com/wshub/wshub/internal/testkit/forgetest/gitlab"
)

// forgeFake is one forge's side of TestIssueCommentsOnTheGitHubAndGitLabFakes: its
// fake with a repository the project is on, a delivery of an issue comment shaped as
// the forge's client library types it, its headers signed, and the comments on an issue.
type forgeFake struct {
	kind string
	// start starts the fake and returns the project's repository URL, the web URL
	// deliveries name it by, and its token.
	start func(t *testing.T) (repo, web, token string)
	// comment is the event of comment id saying text on the test's issue (number 7 on
	// the fake forge), on the repository at web, by a
	// person who may write to it (or, stranger, one who may not).
	comment func(web string, id int64, text string, stranger bool) []byte
	// headers sign body with secret (sign false: a wrong signature) as delivery id.
	headers func(id, secret string, body []byte, sign bool) []string
	// comments are the bodies of the comments on the test's issue.
	comments func() []string
	// pullNote is the event (its name and body) of a note of id saying text on pull
	// request 1, by a person who may write to the repository (or, stranger, one who
	// may not); signAs signs it as delivery id of the event.
	pullNote func(web string, n pullNote) (event string, body []byte)
	signAs   func(event, id, secret string, body []byte) []string
	// pullComments are the bodies of the comments on pull request 1.
	pullComments func() []string
	// labeled is the event (its name and body) of the test's issue, titled title,
	// given label by a person who may write to the repository (or, stranger, one who
	// may not).
	labeled func(web, title, label string, stranger bool) (event string, body []byte)
	// failedCheck is the event (its name and body) of check id failing on commit sha
	// (GitHub's check run, GitLab's pipeline), sent by the forge's CI.
	failedCheck func(web string, id int64, sha string) (event string, body []byte)
	// addComment writes a comment by login on the test's issue, on the forge only, and
	// returns its id.
	addComment func(login, body string) int64
	// addLineComment writes a review comment by the writer on a line of pull request
	// 1, on the forge only, and returns its id and its thread's (GitLab's discussion).
	addLineComment func(body string) (id int64, thread string)
	// threadReplies are the bodies of the replies in the review thread of the line
	// comment id (thread).
	threadReplies func(id int64, thread string) []string
}

// pullNote is a note on a pull request: a review's line comment (path set), a
// review's summary, or a comment in its conversation.
type pullNote struct {
	id       int64
	thread   string // a line comment's discussion (GitLab)
	text     string
	path     string
	line     int64
	summary  bool
	stranger bool
}

func githubFake() forgeFake {
	var fake *ghfake.Server
	return forgeFake{kind: core.ForgeGitHub,
		start: func(t *testing.T) (string, string, string) {
			fake = ghfake.Start(t)
			const token = "ghp_forgeEvents"
			repo := fake.NewRepo(t, "acme", "app")
			fake.Grant(token, "acme", "app", ghfake.Write)
			fake.SetPermission("acme", "app", "octocat", "write")
			fake.SetPermission("acme", "app", "mallory", "read")
			return repo, fake.URL + "/acme/app", token
		},
		comment: func(web string, id int64, text string, stranger bool) []byte {
			login := map[bool]string{false: "octocat", true: "mallory"}[stranger]
			body, _ := json.Marshal(gh.IssueCommentEvent{Action: gh.Ptr("created"),
				Issue:   &gh.Issue{Number: gh.Ptr(7), Title: gh.Ptr("Needs a file"), Body: gh.Ptr("The file is missing.")},
				Comment: &gh.IssueComment{ID: gh.Ptr(id), Body: gh.Ptr(text), User: &gh.User{Login: gh.Ptr(login), Type: gh.Ptr("User")}},
				Repo:    &gh.Repository{HTMLURL: gh.Ptr(web), CloneURL: gh.Ptr(web + ".git")}})
			return body
		},
		headers: func(id, secret string, body []byte, sign bool) []string {
			sig := "sha256=" + hexMAC(secret, body)
			if !sign {
				sig = "sha256=" + hexMAC("not-"+secret, body)
			}
			return []string{"X-GitHub-Delivery", id, "X-GitHub-Event", "issue_comment", "X-Hub-Signature-256", sig}
		},
		comments: func() []string { return githubComments(fake, 7) },
		pullNote: func(web string, n pullNote) (string, []byte) {
			login := map[bool]string{false: "octocat", true: "mallory"}[n.stranger]
			user := &gh.User{Login: gh.Ptr(login), Type: gh.Ptr("User")}
			repo, pull := &gh.Repository{HTMLURL: gh.Ptr(web), CloneURL: gh.Ptr(web + ".git")}, &gh.PullRequest{Number: gh.Ptr(1)}
			var ev any
			name := "issue_comment"
			switch {
			case n.path != "":
				name, ev = "pull_request_review_comment", gh.PullRequestReviewCommentEvent{Action: gh.Ptr("created"), PullRequest: pull, Repo: repo,
					Comment: &gh.PullRequestComment{ID: gh.Ptr(n.id), Body: gh.Ptr(n.text), Path: gh.Ptr(n.path), Line: gh.Ptr(int(n.line)), User: user}}
			case n.summary:
				name, ev = "pull_request_review", gh.PullRequestReviewEvent{Action: gh.Ptr("submitted"), PullRequest: pull, Repo: repo,
					Review: &gh.PullRequestReview{ID: gh.Ptr(n.id), Body: gh.Ptr(n.text), State: gh.Ptr("commented"), User: user}}
			default:
				ev = gh.IssueCommentEvent{Action: gh.Ptr("created"), Repo: repo,
					Issue:   &gh.Issue{Number: gh.Ptr(1), Title: gh.Ptr("Work"), PullRequestLinks: &gh.PullRequestLinks{URL: gh.Ptr(web + "/pulls/1")}},
					Comment: &gh.IssueComment{ID: gh.Ptr(n.id), Body: gh.Ptr(n.text), User: user}}
			}
			body, _ := json.Marshal(ev)
			return name, body
		},
		signAs: func(event, id, secret string, body []byte) []string {
			return []string{"X-GitHub-Delivery", id, "X-GitHub-Event", event, "X-Hub-Signature-256", "sha256=" + hexMAC(secret, body)}
		},
		pullComments: func() []string { return githubComments(fake, 1) },
		addComment:   func(login, body string) int64 { return fake.AddComment("acme", "app", 7, login, body) },
		addLineComment: func(body string) (int64, string) {
			return fake.AddReviewComment("acme", "app", 1, "octocat", "changes/x.txt", 3, body), ""
		},
		threadReplies: func(id int64, _ string) []string {
			var out []string
			for _, c := range fake.ReviewReplies("acme", "app", id) {
				out = append(out, c.Body)
			}
			return out
		},
		failedCheck: func(web string, id int64, sha string) (string, []byte) {
			body, _ := json.Marshal(gh.CheckRunEvent{Action: gh.Ptr("completed"),
				Repo:   &gh.Repository{HTMLURL: gh.Ptr(web), CloneURL: gh.Ptr(web + ".git")},
				Sender: &gh.User{Login: gh.Ptr("github-actions[bot]"), Type: gh.Ptr("Bot")},
				CheckRun: &gh.CheckRun{ID: gh.Ptr(id), Name: gh.Ptr("unit tests"), HeadSHA: gh.Ptr(sha), Status: gh.Ptr("completed"),
					Conclusion: gh.Ptr("failure"), Output: &gh.CheckRunOutput{Summary: gh.Ptr(fmt.Sprintf("run %d: x_test.go:3: want 1, got 2", id))}}})
			return "check_run", body
		},
		labeled: func(web, title, label string, stranger bool) (string, []byte) {
			login := map[bool]string{false: "octocat", true: "mallory"}[stranger]
			body, _ := json.Marshal(gh.IssuesEvent{Action: gh.Ptr("labeled"), Label: &gh.Label{Name: gh.Ptr(label)},
				Issue:  &gh.Issue{Number: gh.Ptr(7), Title: gh.Ptr(title), Body: gh.Ptr("The file is missing.")},
				Sender: &gh.User{Login: gh.Ptr(login), Type: gh.Ptr("User")},
				Repo:   &gh.Repository{HTMLURL: gh.Ptr(web), CloneURL: gh.Ptr(web + ".git")}})
			return "issues", body
		},
	}
}

// githubComments are the bodies of the comments on issue (or pull request) number of
// acme/app.
func githubComments(fake *ghfake.Server, number int) []string {
	var out []string
	for _, c := range fake.Comments("acme", "app", number) {
		out = append(out, c.Body)
	}
	return out
}

func gitlabFake() forgeFake {
	var fake *glfake.Server
	return forgeFake{kind: core.ForgeGitLab,
		start: func(t *testing.T) (string, string, string) {
			fake = glfake.Start(t)
			const token = "glpat-forgeEvents"
			repo := fake.NewRepo(t, "acme/app")
			fake.Grant(token, "acme/app", glfake.Write)
			fake.AddMember("acme/app", 5, "tanuki", 30)
			fake.AddMember("acme/app", 6, "reporter", 20)
			return repo, fake.URL + "/acme/app", token
		},
		comment: func(web string, id int64, text string, stranger bool) []byte {
			user := &gl.User{ID: 5, Username: "tanuki"}
			if stranger {
				user = &gl.User{ID: 6, Username: "reporter"}
			}
			body, _ := json.Marshal(gl.IssueCommentEvent{ObjectKind: "note", EventType: "note", User: user,
				Project: gl.IssueCommentEventProject{WebURL: web, GitHTTPURL: web + ".git"},
				ObjectAttributes: gl.IssueCommentEventObjectAttributes{ID: id, Note: text, NoteableType: "Issue",
					Action: gl.CommentEventActionCreate},
				Issue: gl.IssueCommentEventIssue{IID: 7, Title: "Needs a file", Description: "The file is missing."}})
			return body
		},
		headers: func(id, secret string, _ []byte, sign bool) []string {
			if !sign {
				secret = "not-" + secret
			}
			return []string{"Idempotency-Key", id, "X-Gitlab-Event", "Note Hook", "X-Gitlab-Token", secret}
		},
		comments: func() []string { return noteBodies(fake.Notes("acme/app", 7)) },
		pullNote: func(web string, n pullNote) (string, []byte) {
			user := &gl.EventUser{ID: 5, Username: "tanuki"}
			if n.stranger {
				user = &gl.EventUser{ID: 6, Username: "reporter"}
			}
			a := gl.MergeCommentEventObjectAttributes{ID: n.id, Note: n.text, NoteableType: "MergeRequest",
				Action: gl.CommentEventActionCreate, Type: "DiscussionNote"}
			if n.path != "" {
				a.Type, a.Position = "DiffNote", &gl.NotePosition{PositionType: "text", NewPath: n.path, NewLine: n.line}
				a.DiscussionID = n.thread
			}
			body, _ := json.Marshal(gl.MergeCommentEvent{ObjectKind: "note", EventType: "note", User: user,
				Project: gl.MergeCommentEventProject{WebURL: web, GitHTTPURL: web + ".git"}, ObjectAttributes: a,
				MergeRequest: gl.MergeCommentEventMergeRequest{IID: 1}})
			return "Note Hook", body
		},
		signAs: func(event, id, secret string, _ []byte) []string {
			return []string{"Idempotency-Key", id, "X-Gitlab-Event", event, "X-Gitlab-Token", secret}
		},
		pullComments: func() []string { return noteBodies(fake.MergeRequestNotes("acme/app", 1)) },
		addComment:   func(login, body string) int64 { return fake.AddNote("acme/app", 7, login, body) },
		addLineComment: func(body string) (int64, string) {
			d, id := fake.AddDiffNote("acme/app", 1, "tanuki", body)
			return id, d
		},
		threadReplies: func(_ int64, thread string) []string {
			return noteBodies(fake.DiscussionNotes("acme/app", 1, thread)[1:])
		},
		failedCheck: func(web string, id int64, sha string) (string, []byte) {
			ev := gl.PipelineEvent{ObjectKind: "pipeline", User: &gl.EventUser{ID: 5, Username: "tanuki"},
				Project: gl.PipelineEventProject{WebURL: web, GitHTTPURL: web + ".git"},
				Builds:  []gl.PipelineEventBuild{{Name: fmt.Sprintf("unit %d", id), Stage: "test", Status: "failed"}}}
			ev.ObjectAttributes.ID, ev.ObjectAttributes.SHA, ev.ObjectAttributes.Status = id, sha, "failed"
			body, _ := json.Marshal(ev)
			return "Pipeline Hook", body
		},
		labeled: func(web, title, label string, stranger bool) (string, []byte) {
			user := &gl.EventUser{ID: 5, Username: "tanuki"}
			if stranger {
				user = &gl.EventUser{ID: 6, Username: "reporter"}
			}
			ev := gl.IssueEvent{ObjectKind: "issue", EventType: "issue", User: user,
				Project:          gl.IssueEventProject{WebURL: web, GitHTTPURL: web + ".git"},
				ObjectAttributes: gl.IssueEventObjectAttributes{IID: 7, Title: title, Description: "The file is missing.", Action: "update"}}
			ev.Changes.Labels.Current = []*gl.EventLabel{{ID: 1, Title: label}}
			body, _ := json.Marshal(ev)
			return "Issue Hook", body
		},
	}
}

func noteBodies(notes []glfake.Note) []string {
	var out []string
	for _, n := range notes {
		out = append(out, n.Body)
	}
	return out
}

// On GitHub and GitLab (their fakes, the hub answering through go-github and GitLab's
// client), with deliveries shaped by the same libraries' webhook types: a wrong
// signature or token is 401 and stores nothing; an issue comment naming the handle is
// taken, its redelivery is not taken twice, an unknown repository is ignored and
// counted; and the hub answers with one comment that ends, done, with the link of the
// pull request its workspace opened.
func TestIssueCommentsOnTheGitHubAndGitLabFakes(t *testing.T) {
	onEachForge(t, func(t *testing.T, f forgeFake, h *hubtest.Hub, p *core.Project, web string) {
		path := "/forge/" + f.kind + "/events"
		profile := linkForgeWriter(t, h, f.kind, web)
		// Someone who may not write to the repository asks first: nothing starts,
		// and the hub says why, once.
		early := f.comment(web, 40, "@wshub write "+f.kind, true)
		if got := deliver(t, h, path, early, f.headers("d-0", forgeSecret, early, true)...); got != 202 {
			t.Fatalf("a stranger's delivery: expected 202, got %d", got)
		}
		eventually.Eventually(t, time.Minute, "the hub's comment saying why nothing started", func() bool {
			cs := f.comments()
			return len(cs) == 1 && strings.Contains(cs[0], forgebot.NotAllowed)
		})
		body := f.comment(web, 41, "@wshub write "+f.kind, false)
		checkDeliveries(t, h, f.kind, []delivery{
			{"a wrong signature", body, f.headers("d-1", forgeSecret, body, false), 401, 1},
			{"a signed delivery", body, f.headers("d-1", forgeSecret, body, true), 202, 2},
			{"its redelivery", body, f.headers("d-1", forgeSecret, body, true), 200, 2},
			{"an unknown repository", f.comment("https://forge.example.org/x/y", 42, "@wshub hi", false), f.headers("d-2", forgeSecret, body, true), 200, 2},
		})
		if !unknownCounted(t, h, f.kind, 1) {
			t.Error("expected the unknown repository's delivery counted once")
		}
		waitForThePullRequest(t, f, f.kind)
		checkForgeAuthor(t, h, p, f.kind, profile)
		// The same comment again under another delivery id (a forge's replay makes a
		// new one): handled, and nothing is started or sent twice.
		checkDeliveries(t, h, f.kind, []delivery{{"a replay", body, f.headers("d-9", forgeSecret, body, true), 202, 3}})
		waitHandled(t, h, f.kind, "d-9")
		if n := projectWorkspaces(t, h, p.ID); n != 1 {
			t.Errorf("expected one workspace on the project (none for the stranger), got %d", n)
		}
		var sent int
		if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT count(*) FROM messages m JOIN workspaces w ON w.id = m.workspace_id
		WHERE w.project_id = $1 AND m.role = 'user'`, p.ID).Scan(&sent); err != nil || sent != 1 {
			t.Errorf("expected one message sent, got %d (%v)", sent, err)
		}
	})
}

// forgeSecret is the webhook secret of startForgeProject's project.
const forgeSecret = "forge-secret"

// startForgeProject starts a hub taking forge events, and f's fake with a project on
// it (pull requests opened when ready, events signed with forgeSecret); the account's
// agent and model come from a workspace made first, as for chat. web is the URL
// deliveries name the repository by.
func startForgeProject(t *testing.T, f forgeFake) (h *hubtest.Hub, p *core.Project, web string) {
	t.Helper()
	h = hubtest.StartDelivering(t, withForgeEvents())
	repo, web, token := f.start(t)
	p = h.NewForgeProject(repo, f.kind, core.PullRequestsReady, token)
	setSecret(t, h, p, forgeSecret)
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": h.Project.ID, "agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	return h, p, web
}

// onEachForge runs test on GitHub's fake and on GitLab's, in parallel, each with a
// hub and a project on the fake (startForgeProject).
func onEachForge(t *testing.T, test func(t *testing.T, f forgeFake, h *hubtest.Hub, p *core.Project, web string)) {
	t.Parallel()
	for _, f := range []forgeFake{githubFake(), gitlabFake()} {
		t.Run(f.kind, func(t *testing.T) {
			t.Parallel()
			h, p, web := startForgeProject(t, f)
			test(t, f, h, p, web)
		})
	}
}

// projectWorkspaces counts the workspaces of a project.
func projectWorkspaces(t *testing.T, h *hubtest.Hub, projectID string) int {
	t.Helper()
	var n int
	if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT count(*) FROM workspaces WHERE project_id = $1`, projectID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A turn longer than the status's pace: the hub's one comment shows it working, then
// done with the reply (a finished turn's status never replaces the reply); a later
// request in the issue goes to the same workspace and shows in the same comment.
func TestTheHubsCommentFollowsTheWork(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t, withForgeEvents(), hubtest.WithConfig(func(c *hub.Config) { c.ChatStatusEvery = 100 * time.Millisecond }))
	f := githubFake()
	repo, web, token := f.start(t)
	p := h.NewForgeProject(repo, f.kind, core.PullRequestsOff, token)
	setSecret(t, h, p, "s")
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": h.Project.ID, "agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	body := f.comment(web, 51, "@wshub sleep 2", false)
	if got := deliver(t, h, "/forge/github/events", body, f.headers("d-1", "s", body, true)...); got != 202 {
		t.Fatalf("expected 202, got %d", got)
	}
	for _, want := range []string{"⏳ Working", "✅ Done.\n\nslept 2"} {
		eventually.Eventually(t, time.Minute, "the hub's one comment saying "+want, func() bool {
			cs := f.comments()
			return len(cs) == 1 && strings.HasPrefix(cs[0], want)
		})
	}
	// Once the turn's status is settled too, the comment still shows the reply.
	eventually.Eventually(t, time.Minute, "the turn's status settled", func() bool {
		var open int
		err := h.PG().DB().QueryRowContext(context.Background(), `SELECT count(*) FROM chat_statuses WHERE status = 'open'`).Scan(&open)
		return err == nil && open == 0
	})
	if cs := f.comments(); len(cs) != 1 || !strings.HasPrefix(cs[0], "✅ Done.") {
		t.Errorf("expected the comment to end showing the reply, got %q", cs)
	}
	// A later request in the issue is the workspace's next message, shown in the same
	// comment.
	body = f.comment(web, 52, "@wshub write more", false)
	if got := deliver(t, h, "/forge/github/events", body, f.headers("d-2", "s", body, true)...); got != 202 {
		t.Fatalf("expected 202, got %d", got)
	}
	eventually.NoError(t, time.Minute, "the hub's one comment showing the second reply", func() error {
		if cs := f.comments(); len(cs) != 1 || !strings.HasPrefix(cs[0], "✅ Done.\n\nwrote more.txt") {
			return fmt.Errorf("the comments say %q", cs)
		}
		return nil
	})
	if n := projectWorkspaces(t, h, p.ID); n != 1 {
		t.Errorf("expected the one workspace to take the follow-up, got %d workspaces", n)
	}
}
