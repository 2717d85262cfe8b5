package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	forgebot "github.com/wshub/wshub/bots/forge"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The project's trigger label given to an issue (GitHub's and GitLab's fakes, their
// deliveries typed by their client libraries) starts a workspace with the issue as
// the prompt, once: given by someone who may not write, it starts nothing and the
// hub says why; another label starts nothing; the same event replayed, or the label
// given again, starts no second workspace and sends nothing more.
func TestATriggerLabelStartsAWorkspaceOnceOnTheIssue(t *testing.T) {
	onEachForge(t, func(t *testing.T, f forgeFake, h *hubtest.Hub, p *core.Project, web string) {
		label := "wshub"
		if _, err := h.Service.ForgeAdmin.SetForgeEvents(context.Background(), p.ID, core.ForgeEventsInput{TriggerLabel: &label}); err != nil {
			t.Fatal(err)
		}
		give := func(id, label string, stranger bool) {
			t.Helper()
			event, body := f.labeled(web, "write labelled", label, stranger)
			if got := deliver(t, h, "/forge/"+f.kind+"/events", body, f.signAs(event, id, forgeSecret, body)...); got != 202 {
				t.Fatalf("delivery %s: expected 202, got %d", id, got)
			}
		}
		give("l-1", "wshub", true)
		eventually.Eventually(t, time.Minute, "the hub's comment saying why nothing started", func() bool {
			cs := f.comments()
			return len(cs) == 1 && strings.Contains(cs[0], forgebot.NotAllowed)
		})
		give("l-2", "bug", false)
		give("l-3", "wshub", false)
		waitForThePullRequest(t, f, "labelled")
		give("l-3-replay", "wshub", false)
		give("l-4", "WSHUB", false)
		eventually.NoError(t, time.Minute, "the replay and the label given again handled", func() error {
			var open int
			err := h.PG().DB().QueryRowContext(context.Background(), `SELECT count(*) FROM chat_inbox WHERE platform = $1 AND status <> 'done'`, f.kind).Scan(&open)
			if err == nil && open > 0 {
				err = fmt.Errorf("%d deliveries not handled", open)
			}
			return err
		})
		if n := projectWorkspaces(t, h, p.ID); n != 1 {
			t.Errorf("expected one workspace on the project, got %d", n)
		}
		var wsID string
		if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT id FROM workspaces WHERE project_id = $1`, p.ID).Scan(&wsID); err != nil {
			t.Fatal(err)
		}
		sent := userMessages(t, h, wsID)
		if len(sent) != 1 || !strings.HasPrefix(sent[0], "write labelled\n\nThe file is missing.") {
			t.Errorf("expected one message, the issue, got %q", sent)
		}
	})
}
