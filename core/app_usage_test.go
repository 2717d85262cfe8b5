package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// usagePage: the owners' usage page, read from the turns the worker recorded.
var usagePage = []coretest.Case{
	{Name: "usage counts each member's, project's and agent's work of the last 30 days", Test: usageCountsTheWindow},
}

// takes is a turn's script step that holds the agent for d of the harness's clock.
func takes(c *coretest.Core, d time.Duration) coretest.Step {
	return func(context.Context, *coretest.Turn) *core.TurnResult {
		c.Clock.Advance(d)
		return nil
	}
}

// signedIn adds a member to the account and signs them in to the app.
func signedIn(t *testing.T, c *coretest.Core, accountID, email, name string, role core.Role) *core.AppSession {
	t.Helper()
	ctx := context.Background()
	id, err := core.NewIdentity(core.IdentityEmail, email)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Admin.AddMember(ctx, accountID, id, role, name); err != nil {
		t.Fatalf("add member %s: %v", name, err)
	}
	s, _, err := c.App.SignIn(ctx, core.SignInInput{Identity: id, Email: email, Name: name})
	if err != nil {
		t.Fatalf("sign in %s: %v", name, err)
	}
	return s
}

// usageLine is a row as the test compares it.
func usageLine(r *core.UsageRow) string {
	return fmt.Sprintf("%s: %d workspaces, %d turns, %s, %d failed", r.Name, r.Workspaces, r.Turns, r.AgentTime, r.Failures)
}

func usageCountsTheWindow(t *testing.T, c *coretest.Core) {
	ctx := context.Background()
	c.Runner.Play("usage: slow", takes(c, 90*time.Second), coretest.Reply("done"))
	c.Runner.Play("usage: broken", takes(c, 30*time.Second), coretest.Fail(core.FailureAgentError, "exit 1"))
	acct := c.NewAccount()
	web := c.NewProject(acct.ID, core.AddProjectInput{Name: "web"})
	api := c.NewProject(acct.ID, core.AddProjectInput{Name: "api", Repository: "https://github.com/example/api.git"})
	ada := signedIn(t, c, acct.ID, "ada@usage.example", "Ada", core.RoleOwner)
	bob := signedIn(t, c, acct.ID, "bob@usage.example", "Bob", core.RoleMember)
	start := func(s *core.AppSession, p *core.Project, agent, prompt string) *core.Workspace {
		t.Helper()
		model := "test-model"
		ws, err := c.AppWorkspaces.Start(ctx, s, core.CreateWorkspaceInput{Prompt: &prompt, ProjectID: &p.ID, Agent: &agent, Model: &model})
		if err != nil {
			t.Fatalf("start %q: %v", prompt, err)
		}
		return ws
	}

	// Before the window: Ada's workspace and its turn; a turn of it in the window counts,
	// the workspace does not.
	old := start(ada, web, "agent_1", "usage: slow")
	c.Settle()
	db := c.Store.DB()
	for _, stmt := range []string{
		`UPDATE workspaces SET created_at = created_at - interval '31 days' WHERE id = $1`,
		`UPDATE messages SET created_at = created_at - interval '31 days', delivered_at = delivered_at - interval '31 days'
		 WHERE workspace_id = $1`,
	} {
		if _, err := db.ExecContext(ctx, stmt, old.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AppWorkspaces.Send(ctx, ada, old.ID, "usage: broken", nil, ""); err != nil {
		t.Fatal(err)
	}
	mine := start(ada, web, "agent_1", "usage: slow")
	c.Settle()
	if _, err := c.AppWorkspaces.Send(ctx, ada, mine.ID, "usage: broken", nil, ""); err != nil {
		t.Fatal(err)
	}
	start(bob, api, "agent_2", "usage: slow")
	// A workspace started with an API key: its key's, not a person's.
	keyed := *acct
	keyed.KeyID, keyed.KeyName = "key_usage", "ci"
	agent, model, prompt := "agent_1", "test-model", "usage: quick"
	if _, _, err := c.Workspaces.CreateWorkspace(ctx, &keyed, core.CreateWorkspaceInput{Prompt: &prompt, ProjectID: &web.ID, Agent: &agent, Model: &model}); err != nil {
		t.Fatal(err)
	}
	// Another account's work, on a project named as one of these, never shows.
	other := c.NewAccount()
	c.NewProject(other.ID, core.AddProjectInput{Name: "web"})
	stranger := signedIn(t, c, other.ID, "eve@usage.example", "Eve", core.RoleOwner)
	otherWeb, err := c.AppProjects.List(ctx, stranger)
	if err != nil {
		t.Fatal(err)
	}
	start(stranger, otherWeb[0], "agent_3", "usage: broken")
	c.Settle()

	u, err := c.App.Usage(ctx, ada)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Clock.Now().Sub(u.Since); got != core.UsageWindow || !u.Until.Equal(c.Clock.Now()) {
		t.Errorf("expected the last %s up to now, got %s to %s", core.UsageWindow, u.Since, u.Until)
	}
	for _, tc := range []struct {
		table string
		got   []*core.UsageRow
		want  []string
	}{
		{"members", u.Members, []string{
			"Ada: 1 workspaces, 3 turns, 2m30s, 2 failed",
			"Bob: 1 workspaces, 1 turns, 1m30s, 0 failed",
			"ci (API key): 1 workspaces, 1 turns, 0s, 0 failed",
		}},
		{"projects", u.Projects, []string{
			"web: 2 workspaces, 4 turns, 2m30s, 2 failed",
			"api: 1 workspaces, 1 turns, 1m30s, 0 failed",
		}},
		{"agents", u.Agents, []string{
			"Claude Code (agent_1): 2 workspaces, 4 turns, 2m30s, 2 failed",
			"Codex (agent_2): 1 workspaces, 1 turns, 1m30s, 0 failed",
		}},
	} {
		var got []string
		for _, r := range tc.got {
			got = append(got, usageLine(r))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: expected\n%q\ngot\n%q", tc.table, tc.want, got)
		}
	}

	if _, err := c.App.Usage(ctx, bob); core.ErrorCode(err) != core.CodeOwnerRequired {
		t.Errorf("expected a member refused the usage page, got %v", err)
	}
	if u, err := c.App.Usage(ctx, stranger); err != nil || len(u.Members) != 1 || u.Members[0].Name != "Eve" {
		t.Errorf("expected the other account's owner to see Eve's work only, got %+v (%v)", u, err)
	}
}
