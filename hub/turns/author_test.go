package turns_test

import (
	"path/filepath"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// The commits of a turn's work are by WSHUB_COMMIT_AUTHOR, on the hub's host and in a
// process runtime alike, whatever the agent put in the checkout's git config.
func TestTurnCommitsAreByTheConfiguredAuthor(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) { c.CommitAuthor = "Build Bot <bot@example.com>" }))
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			id := hubtest.CreateOn(t, h, provider, "write hello")
			ws := hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
			// The hub's own copy of the branch: the checkout on the hub's host, or
			// what the runtime uploaded.
			repo := filepath.Join(h.Config.DataDir, "workspaces", id, "checkout")
			if provider == "process" {
				repo = filepath.Join(h.Config.DataDir, "branches", id+".git")
			}
			got := hubtest.Git(t, repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", ws["branch"].(string))
			if want := "Build Bot <bot@example.com>|Build Bot <bot@example.com>"; got != want {
				t.Fatalf("expected the commit by %q, got %q", want, got)
			}
		})
	}
}
