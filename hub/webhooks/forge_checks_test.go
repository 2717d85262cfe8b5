package webhooks_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	forgebot "github.com/wshub/wshub/bots/forge"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// A failed check on the head commit of a workspace's pull request (GitHub's check
// run, GitLab's pipeline, on their fakes): off by default; with --fix-checks 2 the
// first two become the workspace's follow-ups, once each however often delivered;
// one on a stale commit is nothing; the third has the hub say, once, that it stops.
func TestFailedChecksOnAWorkspacesPullRequestAreFixedUpToTheLimit(t *testing.T) {
	onEachForge(t, func(t *testing.T, f forgeFake, h *hubtest.Hub, p *core.Project, web string) {
		path := "/forge/" + f.kind + "/events"
		first := f.comment(web, 41, "@wshub write first", false)
		if got := deliver(t, h, path, first, f.headers("d-1", forgeSecret, first, true)...); got != 202 {
			t.Fatalf("the issue's request: expected 202, got %d", got)
		}
		waitForThePullRequest(t, f, "first")
		var wsID, head string
		if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT id, head_commit FROM workspaces WHERE project_id = $1`, p.ID).Scan(&wsID, &head); err != nil || head == "" {
			t.Fatalf("expected the workspace's head commit, got %q (%v)", head, err)
		}
		check := func(delivery string, id int64, sha string) {
			t.Helper()
			event, body := f.failedCheck(web, id, sha)
			if got := deliver(t, h, path, body, f.signAs(event, delivery, forgeSecret, body)...); got != 202 {
				t.Fatalf("check %d as %s: expected 202, got %d", id, delivery, got)
			}
			waitHandled(t, h, f.kind, delivery)
		}
		check("c-off", 90, head) // fixing checks is off by default
		fix := 2
		if _, err := h.Service.ForgeAdmin.SetForgeEvents(context.Background(), p.ID, core.ForgeEventsInput{FixChecks: &fix}); err != nil {
			t.Fatal(err)
		}
		check("c-stale", 91, strings.Repeat("0", len(head))) // not the pull request's head
		check("c-1", 92, head)
		check("c-1-again", 92, head) // the same check under a new delivery id
		check("c-2", 93, head)
		var want []string
		for _, id := range []int64{92, 93} {
			name := map[string]string{core.ForgeGitHub: "unit tests", core.ForgeGitLab: fmt.Sprintf("pipeline #%d", id)}[f.kind]
			want = append(want, "The check "+name+" failed: ")
		}
		eventually.NoError(t, 2*time.Minute, "the two fixes' turns done", func() error {
			if cs := f.pullComments(); len(cs) != 1 || !strings.Contains(cs[0], "Done.") || !strings.Contains(cs[0], "93") {
				return fmt.Errorf("the pull request's comments say %q", cs)
			}
			return nil
		})
		check("c-3", 94, head)
		check("c-4", 95, head)
		limit := fmt.Sprintf(forgebot.ChecksLimit, 2)
		eventually.NoError(t, time.Minute, "the hub saying it stops", func() error {
			if cs := f.pullComments(); len(cs) != 1 || !strings.Contains(cs[0], limit) {
				return fmt.Errorf("the pull request's comments say %q", cs)
			}
			return nil
		})
		sent := userMessages(t, h, wsID)
		if len(sent) != 3 || !slices.EqualFunc(sent[1:], want, strings.HasPrefix) {
			t.Fatalf("expected the request, then two fixes %q, got %q", want, sent)
		}
		if !strings.Contains(sent[1], "92") || !strings.Contains(sent[2], "93") {
			t.Errorf("expected each fix to quote its check's output, got %q", sent[1:])
		}
	})
}

// waitHandled waits for the inbox to have handled a delivery.
func waitHandled(t *testing.T, h *hubtest.Hub, kind, delivery string) {
	t.Helper()
	eventually.Eventually(t, time.Minute, "delivery "+delivery+" handled", func() bool {
		var status string
		err := h.PG().DB().QueryRowContext(context.Background(), `SELECT status FROM chat_inbox WHERE platform = $1 AND event_id = $2`, kind, delivery).Scan(&status)
		return err == nil && status == "done"
	})
}
