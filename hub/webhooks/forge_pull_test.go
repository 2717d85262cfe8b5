package webhooks_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// On the pull request a workspace opened (GitHub's and GitLab's fakes, deliveries
// typed by their client libraries): a review's line comment, with its file and line,
// a review's summary and a comment naming the handle become the workspace's next
// messages, in order, one turn each; a stranger's review comment, a comment that does
// not name the handle and the hub's own comment do not. The hub answers in the pull
// request with one comment, edited as the work goes; the line comment's answer goes in
// its review thread.
func TestReviewsOnAWorkspacesPullRequestAreItsFollowUps(t *testing.T) {
	onEachForge(t, func(t *testing.T, f forgeFake, h *hubtest.Hub, p *core.Project, web string) {
		first := f.comment(web, 41, "@wshub write first", false)
		if got := deliver(t, h, "/forge/"+f.kind+"/events", first, f.headers("d-1", forgeSecret, first, true)...); got != 202 {
			t.Fatalf("the issue's request: expected 202, got %d", got)
		}
		waitForThePullRequest(t, f, "first")
		var want []string
		line, thread := f.addLineComment("look here")
		asked := time.Now()
		for i, n := range []struct {
			note pullNote
			sent string // the message it becomes ("": none)
		}{
			{pullNote{id: line, thread: thread, text: "look here", path: "changes/x.txt", line: 3}, "On changes/x.txt line 3: look here"},
			{pullNote{id: 62, text: "write evil", path: "changes/x.txt", line: 4, stranger: true}, ""},
			{pullNote{id: 63, text: "nice work"}, ""},
			{pullNote{id: 64, text: "@wshub write loop\n\n" + core.ForgeCommentMark}, ""},
			{pullNote{id: 65, text: "write review", summary: true}, "write review"},
			{pullNote{id: 66, text: "@wshub write more"}, "write more"},
		} {
			if n.note.summary && f.kind == core.ForgeGitLab {
				continue // GitLab's reviews send their notes, and no summary
			}
			event, body := f.pullNote(web, n.note)
			if got := deliver(t, h, "/forge/"+f.kind+"/events", body, f.signAs(event, fmt.Sprintf("p-%d", i), forgeSecret, body)...); got != 202 {
				t.Fatalf("%q: expected 202, got %d", n.note.text, got)
			}
			if n.sent != "" {
				want = append(want, n.sent)
			}
		}
		eventually.Eventually(t, time.Minute, "the hub's first comment in the pull request", func() bool { return len(f.pullComments()) > 0 })
		t.Logf("a review's comment to the hub's first comment back in the pull request: %v", time.Since(asked).Round(time.Millisecond))
		eventually.NoError(t, 2*time.Minute, "the hub's one comment in the pull request showing the last reply", func() error {
			if cs := f.pullComments(); len(cs) != 1 || !strings.HasPrefix(cs[0], "✅ Done.\n\nwrote more.txt") {
				return fmt.Errorf("the pull request's comments say %q", cs)
			}
			return nil
		})
		// The line comment's answer is in its review thread, beside the line, once.
		if rs := f.threadReplies(line, thread); len(rs) != 1 || !strings.HasPrefix(rs[0], "✅ Done.") || !strings.HasSuffix(rs[0], core.ForgeCommentMark) {
			t.Errorf("expected the hub's one answer in the line comment's review thread, got %q", rs)
		}
		var wsID string
		if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT id FROM workspaces WHERE project_id = $1`, p.ID).Scan(&wsID); err != nil {
			t.Fatal(err)
		}
		if sent := userMessages(t, h, wsID); len(sent) < 1 || !slices.Equal(sent[1:], want) {
			t.Errorf("expected the request, then %q, got %q", want, sent)
		}
	})
}

// waitForThePullRequest waits for the hub's one comment in the test's issue to say the
// work is done (the agent wrote name.txt), ending with the link of the pull request
// its workspace opened (number 1 on the fakes).
func waitForThePullRequest(t *testing.T, f forgeFake, name string) {
	t.Helper()
	link := map[string]string{core.ForgeGitHub: "/acme/app/pull/1", core.ForgeGitLab: "/acme/app/-/merge_requests/1"}[f.kind]
	eventually.NoError(t, 2*time.Minute, "the hub's one comment done, ending with the pull request's link", func() error {
		cs := f.comments()
		if len(cs) != 1 {
			return fmt.Errorf("expected one comment, got %q", cs)
		}
		done := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cs[0]), core.ForgeCommentMark))
		if !strings.Contains(done, "Done.") || !strings.Contains(done, "wrote "+name+".txt") || !strings.HasSuffix(done, link) {
			return fmt.Errorf("the comment says %q", cs[0])
		}
		return nil
	})
}

// userMessages are the texts of a workspace's user messages, in order.
func userMessages(t *testing.T, h *hubtest.Hub, wsID string) []string {
	t.Helper()
	r := h.Call("GET", "/v1/api/workspaces/"+wsID+"/messages", h.Key, nil).Expect(t, 200, "")
	var sent []string
	for _, m := range r.Body["messages"].([]any) {
		if m := m.(map[string]any); m["role"] == "user" {
			sent = append(sent, m["text"].(string))
		}
	}
	return sent
}
