package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// pullRequestState: after a workspace's pushes, opened once, updated, kept when
// merged, refused in the forge's words, asked for by a person, refreshed on a read.
// Each case has an account and a project that pushes of its own.
var pullRequestState = []coretest.Case{
	{Name: "a push opens one pull request and later pushes update it", Test: pullOpenedThenUpdated},
	{Name: "a merged pull request stays the workspace's and none is opened again", Test: pullMergedKept},
	{Name: "a forge's refusal is shown in its words and the turn still completes", Test: pullRefused},
	{Name: "a person asks for one on a project whose pull requests are off", Test: pullAskedFor},
	{Name: "a read asks the forge for an open pull request's state at most once a minute", Test: pullStateRead},
}

// pushingTenant is a new account whose one project pushes to GitHub with pull
// requests set to mode.
func pushingTenant(c *coretest.Core, mode string) *core.Account {
	a := c.NewAccount()
	forge := core.ForgeGitHub
	c.NewProject(a.ID, core.AddProjectInput{Push: true, Forge: core.ProjectForgeInput{Forge: &forge, PullRequests: &mode}})
	return a
}

// pullsOf are the forge's pull requests from the workspace's branch, with their bodies.
func pullsOf(c *coretest.Core, ws *core.Workspace) ([]core.PullRequest, []string) {
	var pulls []core.PullRequest
	var bodies []string
	all, allBodies := c.Forge.Pulls()
	for i, p := range all {
		if p.Head == ws.Branch {
			pulls, bodies = append(pulls, p), append(bodies, allBodies[i])
		}
	}
	return pulls, bodies
}

// lastReply is the text of the workspace's newest reply.
func lastReply(c *coretest.Core, acct *core.Account, wsID string) string {
	msgs := c.Messages(acct, wsID)
	return msgs[len(msgs)-1].Text
}

func pullOpenedThenUpdated(t *testing.T, c *coretest.Core) {
	a := pushingTenant(c, core.PullRequestsDraft)
	ws := c.Create(a, "Add a README")
	c.Settle()
	pulls, bodies := pullsOf(c, ws)
	if len(pulls) != 1 || !pulls[0].Draft || pulls[0].Base != "main" || !strings.Contains(bodies[0], "1. Add a README") {
		t.Fatalf("expected one draft pull request to main listing the turn, got %+v %q", pulls, bodies)
	}
	n := pulls[0].Number
	if got := c.Workspace(a, ws.ID).Pull; got.Number != n || got.State != core.PullRequestOpen || got.URL != pulls[0].URL {
		t.Fatalf("expected the workspace to show pull request #%d open, got %+v", n, got)
	}
	if reply := lastReply(c, a, ws.ID); !strings.Contains(reply, fmt.Sprintf("Opened pull request #%d: %s", n, pulls[0].URL)) {
		t.Fatalf("expected the reply to say it was opened, got %q", reply)
	}

	c.Send(a, ws.ID, "Fix a typo")
	c.Settle()
	pulls, bodies = pullsOf(c, ws)
	if len(pulls) != 1 || !strings.Contains(bodies[0], "2. Fix a typo") {
		t.Fatalf("expected the one pull request's body updated with the second turn, got %+v %q", pulls, bodies)
	}
	if reply := lastReply(c, a, ws.ID); !strings.Contains(reply, fmt.Sprintf("Updated pull request #%d", n)) {
		t.Fatalf("expected the reply to say it was updated, got %q", reply)
	}
}

func pullMergedKept(t *testing.T, c *coretest.Core) {
	a := pushingTenant(c, core.PullRequestsReady)
	ws := c.Create(a, "first")
	c.Settle()
	pulls, _ := pullsOf(c, ws)
	if len(pulls) != 1 || pulls[0].Draft {
		t.Fatalf("expected one ready pull request, got %+v", pulls)
	}
	n := pulls[0].Number
	c.Forge.SetState(n, core.PullRequestMerged)
	for _, text := range []string{"after the merge", "again"} {
		c.Send(a, ws.ID, text)
		c.Settle()
		if got := c.Workspace(a, ws.ID).Pull; got.Number != n || got.State != core.PullRequestMerged {
			t.Fatalf("expected pull request #%d shown merged, got %+v", n, got)
		}
	}
	if pulls, _ := pullsOf(c, ws); len(pulls) != 1 {
		t.Fatalf("expected no pull request opened after the merge, got %d", len(pulls))
	}
	if reply := lastReply(c, a, ws.ID); !strings.Contains(reply, fmt.Sprintf("Pull request #%d is merged", n)) {
		t.Fatalf("expected the reply to say it is merged, got %q", reply)
	}
}

func pullRefused(t *testing.T, c *coretest.Core) {
	a := pushingTenant(c, core.PullRequestsDraft)
	c.Forge.Refuse(&core.ForgeRefusal{Status: 403, Reason: "Resource not accessible by integration"})
	defer c.Forge.Refuse(nil)
	ws := c.Create(a, "refused")
	c.Settle()
	words := "Resource not accessible by integration (HTTP 403)"
	if got := c.Workspace(a, ws.ID); got.Pull.Error != words || got.Pull.Number != 0 || got.LastTurnOutcome != core.OutcomeCompleted {
		t.Fatalf("expected the refusal kept in its words and the turn completed, got %+v %s", got.Pull, got.LastTurnOutcome)
	}
	if reply := lastReply(c, a, ws.ID); !strings.Contains(reply, "Could not open a pull request: "+words) {
		t.Fatalf("expected the reply to give the forge's words, got %q", reply)
	}
}

func pullAskedFor(t *testing.T, c *coretest.Core) {
	a := pushingTenant(c, core.PullRequestsOff)
	ws := c.Create(a, "pushed, no pull request")
	c.Settle()
	if pulls, _ := pullsOf(c, ws); len(pulls) != 0 {
		t.Fatalf("expected no pull request while they are off, got %+v", pulls)
	}
	got, err := c.Workspaces.OpenPullRequest(context.Background(), a, ws.ID)
	pulls, _ := pullsOf(c, ws)
	if err != nil || len(pulls) != 1 || got.Pull.Number != pulls[0].Number || !got.Pull.Requested || got.Pull.State != core.PullRequestOpen {
		t.Fatalf("expected the ask to open one pull request now, got %+v %+v (%v)", got, pulls, err)
	}
	if again, err := c.Workspaces.OpenPullRequest(context.Background(), a, ws.ID); err != nil || again.Pull.Number != pulls[0].Number {
		t.Fatalf("expected a second ask to find the same one, got %+v (%v)", again, err)
	}

	b := tenant(c) // its project does not push
	other := c.Create(b, "")
	if _, err := c.Workspaces.OpenPullRequest(context.Background(), b, other.ID); core.ErrorCode(err) != core.CodePullRequestRefused {
		t.Fatalf("expected a project that does not push refused %s, got %v", core.CodePullRequestRefused, err)
	}
	c.Settle()
}

// forgeReads counts the forge's reads of a pull request's state so far.
func forgeReads(c *coretest.Core) int {
	n := 0
	for _, call := range c.Forge.Calls() {
		if call == "get" {
			n++
		}
	}
	return n
}

// A reader sees what the hub has at once; when the forge was last asked more than a
// minute ago, the read also asks it in the background, and the next read shows what
// it said (a merge made on the forge).
func pullStateRead(t *testing.T, c *coretest.Core) {
	a := pushingTenant(c, core.PullRequestsDraft)
	ws := c.Create(a, "merged on the forge")
	c.Settle()
	pulls, _ := pullsOf(c, ws)
	if len(pulls) != 1 {
		t.Fatalf("expected one pull request, got %+v", pulls)
	}
	n := pulls[0].Number
	c.Forge.SetState(n, core.PullRequestMerged)
	reads := forgeReads(c)
	if got := c.Workspace(a, ws.ID).Pull; got.State != core.PullRequestOpen || forgeReads(c) != reads {
		t.Fatalf("expected a read within the minute to answer open without asking the forge, got %s and %d reads", got.State, forgeReads(c)-reads)
	}

	c.Clock.Advance(2 * time.Minute)
	if got := c.Workspace(a, ws.ID).Pull; got.State != core.PullRequestOpen {
		t.Fatalf("expected the read to answer with what the hub has, got %s", got.State)
	}
	c.AwaitPullRecorded(t, ws.ID)
	if got := c.Workspace(a, ws.ID).Pull; got.State != core.PullRequestMerged || got.Number != n || forgeReads(c) != reads+1 {
		t.Fatalf("expected the next read to show #%d merged after one read of the forge, got %+v and %d reads", n, got, forgeReads(c)-reads)
	}
}
