package webhooks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The issue's recent comments, read from the forge (GitHub's and GitLab's fakes), go
// with the request that starts its workspace: the newest five, oldest first, without
// the hub's own comments and without the request itself.
func TestAnIssuesRecentCommentsAreItsWorkspacesContext(t *testing.T) {
	onEachForge(t, func(t *testing.T, f forgeFake, h *hubtest.Hub, p *core.Project, web string) {
		f.addComment("alice", "the oldest")
		f.addComment("bob", "two")
		f.addComment("wshub", "an old answer\n\n"+core.ForgeCommentMark)
		for _, words := range []string{"three", "four", "five", "six"} {
			f.addComment("bob", words)
		}
		login := map[string]string{core.ForgeGitHub: "octocat", core.ForgeGitLab: "tanuki"}[f.kind]
		id := f.addComment(login, "@wshub write context")
		body := f.comment(web, id, "@wshub write context", false)
		if got := deliver(t, h, "/forge/"+f.kind+"/events", body, f.headers("c-1", forgeSecret, body, true)...); got != 202 {
			t.Fatalf("expected 202, got %d", got)
		}
		wsID := eventually.Value(t, time.Minute, "the issue's workspace", func() (string, error) {
			var id string
			err := h.PG().DB().QueryRowContext(context.Background(), `SELECT id FROM workspaces WHERE project_id = $1`, p.ID).Scan(&id)
			return id, err
		})
		sent := userMessages(t, h, wsID)
		want := "\n\nThe issue's recent comments:\n\nbob wrote: two\n\nbob wrote: three\n\nbob wrote: four\n\nbob wrote: five\n\nbob wrote: six"
		if len(sent) != 1 || !strings.HasPrefix(sent[0], "write context\n\nThis was asked in issue #7") || !strings.HasSuffix(sent[0], want) {
			t.Errorf("expected the request with the issue and its five recent comments, got %q", sent)
		}
	})
}
