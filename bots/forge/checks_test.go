package forge

import (
	"encoding/json"
	"strings"
	"testing"

	gh "github.com/google/go-github/v89/github"
	gl "gitlab.com/gitlab-org/api/client-go/v2"
)

// A failed check on a commit, as the forges' client libraries type their deliveries
// (Gitea's as its documentation shows one): GitHub's check run that completed failed
// or timed out, GitHub's and Gitea's status of failure or error, GitLab's failed
// pipeline with its failed jobs. Passing, pending or other events are not.
func TestFailedChecksOfTheThreeForges(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	repo := &gh.Repository{HTMLURL: gh.Ptr("https://github.com/o/r")}
	run := func(action, conclusion string) []byte {
		b, _ := json.Marshal(gh.CheckRunEvent{Action: gh.Ptr(action), Repo: repo, Sender: &gh.User{Login: gh.Ptr("github-actions[bot]"), Type: gh.Ptr("Bot")},
			CheckRun: &gh.CheckRun{ID: gh.Ptr(int64(71)), Name: gh.Ptr("test"), HeadSHA: gh.Ptr(sha), Status: gh.Ptr("completed"), Conclusion: gh.Ptr(conclusion),
				Output: &gh.CheckRunOutput{Title: gh.Ptr("1 failed"), Summary: gh.Ptr("TestX failed"), Text: gh.Ptr("x_test.go:3: want 1, got 2")}}})
		return b
	}
	status := func(state string) []byte {
		b, _ := json.Marshal(gh.StatusEvent{ID: gh.Ptr(int64(72)), SHA: gh.Ptr(sha), State: gh.Ptr(state), Context: gh.Ptr("ci/build"),
			Description: gh.Ptr("The build failed"), TargetURL: gh.Ptr("https://ci.example.org/b/1"), Repo: repo})
		return b
	}
	gitea := func(state string) []byte {
		return []byte(`{"commit":{"id":"` + sha + `"},"context":"woodpecker/push","created_at":"2026-11-29T01:00:00Z",` +
			`"description":"Pipeline failed","id":73,"repository":{"html_url":"https://gitea.example.org/o/r"},` +
			`"sender":{"login":"woodpecker","id":9},"sha":"` + sha + `","state":"` + state + `","target_url":""}`)
	}
	pipeline := func(status string) []byte {
		ev := gl.PipelineEvent{ObjectKind: "pipeline"}
		ev.Project.WebURL = "https://gitlab.com/o/r"
		ev.ObjectAttributes.ID, ev.ObjectAttributes.SHA, ev.ObjectAttributes.Status = 74, sha, status
		ev.Builds = []gl.PipelineEventBuild{{Name: "lint", Stage: "test", Status: "success"}, {Name: "unit", Stage: "test", Status: "failed"},
			{Name: "e2e", Stage: "verify", Status: "failed"}}
		b, _ := json.Marshal(ev)
		return b
	}
	for _, tt := range []struct {
		what, kind, event string
		body              []byte
		want              *failedCheck
	}{
		{"GitHub's check run failed", "github", "check_run", run("completed", "failure"),
			&failedCheck{Name: "test", Key: "run:71", SHA: sha, Output: "TestX failed\n\nx_test.go:3: want 1, got 2"}},
		{"timed out", "github", "check_run", run("completed", "timed_out"),
			&failedCheck{Name: "test", Key: "run:71", SHA: sha, Output: "TestX failed\n\nx_test.go:3: want 1, got 2"}},
		{"passed", "github", "check_run", run("completed", "success"), nil},
		{"not yet completed", "github", "check_run", run("created", ""), nil},
		{"GitHub's status of failure", "github", "status", status("failure"),
			&failedCheck{Name: "ci/build", Key: "status:72", SHA: sha, Output: "The build failed\n\nDetails: https://ci.example.org/b/1"}},
		{"of error", "github", "status", status("error"),
			&failedCheck{Name: "ci/build", Key: "status:72", SHA: sha, Output: "The build failed\n\nDetails: https://ci.example.org/b/1"}},
		{"pending", "github", "status", status("pending"), nil},
		{"Gitea's status of failure", "gitea", "status", gitea("failure"),
			&failedCheck{Name: "woodpecker/push", Key: "status:73", SHA: sha, Output: "Pipeline failed"}},
		{"Gitea's success", "gitea", "status", gitea("success"), nil},
		{"GitLab's pipeline failed", "gitlab", "Pipeline Hook", pipeline("failed"),
			&failedCheck{Name: "pipeline #74", Key: "pipeline:74", SHA: sha, Output: "the failed jobs: unit (stage test), e2e (stage verify)"}},
		{"running", "gitlab", "Pipeline Hook", pipeline("running"), nil},
	} {
		ev, err := parse(tt.kind, tt.event, tt.body)
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		switch {
		case tt.want == nil && ev.Check != nil:
			t.Errorf("%s: expected no failed check, got %+v", tt.what, *ev.Check)
		case tt.want != nil && (ev.Check == nil || *ev.Check != *tt.want):
			t.Errorf("%s: expected %+v, got %+v", tt.what, *tt.want, ev.Check)
		}
	}
}

// A failed check's message names it and quotes the end of its output, bounded (a log's
// end says why), cut between characters.
func TestAFailedChecksMessageQuotesTheEndOfItsOutput(t *testing.T) {
	long := "é" + strings.Repeat("x", maxCheckOutput) + "the test failed here"
	got := (&failedCheck{Name: "test", Output: long}).prompt()
	if !strings.HasPrefix(got, "The check test failed: …") || !strings.Contains(got, "the test failed here\n\n") || strings.Contains(got, "é") {
		t.Errorf("expected the end of the output after the check's name, got %q", got[:80])
	}
	if n := len(got); n > maxCheckOutput+100 {
		t.Errorf("expected the quote bounded to %d bytes, got a message of %d", maxCheckOutput, n)
	}
	if got := (&failedCheck{Name: "ci"}).prompt(); !strings.HasPrefix(got, "The check ci failed") {
		t.Errorf("expected a check without output named, got %q", got)
	}
}
