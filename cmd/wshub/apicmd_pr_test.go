package main

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// wshub ws pr on a project whose pull requests are off: after the branch is pushed,
// it opens one and prints its URL alone; asked again, the same one; ws get shows it;
// a branch not pushed yet exits 7, and the next push opens it.
func TestWsPROpensThePullRequestAndPrintsItsURL(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)))
	gh := ghfake.Start(t)
	repo := gh.NewRepo(t, "acme", "cli")
	gh.Grant("ghp_cli", "acme", "cli", ghfake.Write)
	p := h.NewForgeProject(repo, core.ForgeGitHub, core.PullRequestsOff, "ghp_cli")
	env := testEnviron("WSHUB_URL="+h.URL, "WSHUB_API_KEY="+h.Key)
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errs := wshubAPI(t, env, "", args...)
		expectExit(t, want, code, out, errs, args...)
		return out, errs
	}
	// A workspace whose first turn changes nothing: its branch is not pushed yet.
	_, errs := run(0, "ws", "create", "--project", p.ID, "--prompt", "hello", "--agent", "agent_1", "--model", "m", "--branch", "ci/pr", "--wait")
	id := strings.Fields(errs)[1]
	if _, errs = run(exitPullPending, "ws", "pr", "--branch", "ci/pr"); !strings.Contains(errs, "next push of ci/pr") {
		t.Fatalf("expected the request said pending, got %q", errs)
	}
	if len(gh.Pulls("acme", "cli")) != 0 {
		t.Fatal("a pull request was opened before the branch was pushed")
	}
	// The next push opens it; the reply says so.
	out, _ := run(0, "ws", "send", id, "write ci", "--wait")
	url := gh.URL + "/acme/cli/pull/1"
	if !strings.Contains(out, "Opened pull request #1: "+url) {
		t.Fatalf("expected the reply to carry the pull request, got %q", out)
	}
	if out, _ = run(0, "ws", "pr", id); out != url+"\n" {
		t.Fatalf("expected the URL alone on stdout, got %q", out)
	}
	if out, _ = run(0, "ws", "get", id); !strings.Contains(out, "PULL REQUEST") || !strings.Contains(out, "#1 open") {
		t.Fatalf("expected ws get to show the pull request, got %q", out)
	}
	if n := len(gh.Pulls("acme", "cli")); n != 1 {
		t.Fatalf("expected one pull request, got %d", n)
	}
	run(exitUsage, "ws", "pr")
}
