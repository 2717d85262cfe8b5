package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/browsertest"
)

// In a real browser: a member starts a workspace from the start form, lands on its
// page, and reads the agent's reply there, rendered from Markdown with nothing in it
// run; the list shows the workspace as theirs. The start form, the workspace's page
// and the list pass axe-core and are pictured at desktop and phone widths.
func TestInABrowserAMemberStartsAWorkspaceAndReadsTheReply(t *testing.T) {
	s := workingSite(t)
	b := browsertest.Start(t)
	b.ScreenshotDir = screenshotDir()
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	picture := func(name string) { picture(t, b, name) }
	if code := s.signInInBrowser(b, "ada-1"); code != http.StatusOK || pathOf(t, b) != "/app/workspaces" {
		t.Fatalf("expected Ada on the workspaces, got %d at %s", code, b.URL(t))
	}
	b.Follow(t, `a[href="/app/workspaces/new"]`)
	picture("workspace-new")
	b.FillByLabel(t, "What should the agent do?", "say **done** <img src=x onerror=window.__y=1> <script>window.__x=1</script>")
	b.FillByLabel(t, "Model", "test-model")
	if code := b.Submit(t, `form[action="/app/workspaces"]`); code != http.StatusOK || !strings.HasPrefix(pathOf(t, b), "/app/workspaces/ws_") {
		t.Fatalf("expected the new workspace's page, got %d at %s", code, b.URL(t))
	}
	page := b.URL(t)
	// The page is drawn on the server: read it again until the reply is there.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(b.Text(t, "main"), "echo: say") {
		if time.Now().After(deadline) {
			t.Fatalf("no reply within a minute: %q", b.Text(t, "main"))
		}
		time.Sleep(200 * time.Millisecond)
		b.Open(t, page)
	}
	var inert bool
	b.Eval(t, `window.__x === undefined && window.__y === undefined &&
		document.querySelectorAll(".reply img, .reply script, .text img, .text script").length === 0 &&
		document.querySelector(".reply strong").textContent === "done"`, &inert)
	if !inert {
		t.Errorf("expected the reply rendered with nothing run or embedded: %q", b.Text(t, "main"))
	}
	if meta := b.Text(t, ".message.user .meta"); !strings.Contains(meta, "Ada Lovelace") {
		t.Errorf("expected the prompt by Ada, got %q", meta)
	}
	picture("workspace")
	b.Open(t, s.hub.URL+"/app/workspaces?mine=1")
	if list := b.Text(t, "table"); !strings.Contains(list, strings.TrimPrefix(page, s.hub.URL+"/app/workspaces/")) || !strings.Contains(list, "Ada Lovelace") {
		t.Errorf("expected the workspace among Ada's, got %q", list)
	}
	picture("workspace-list")
}
