package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

var (
	workSection = regexp.MustCompile(`(?s)<section id="work".*?</section>`)
	setupTail   = regexp.MustCompile(`(?s)<pre class="setup-log"[^>]*>(.*?)</pre>`)
	commitLine  = regexp.MustCompile(`<li><code>([0-9a-f]{12})</code> write hello</li>`)
)

// workOf is the work section of a workspace's page.
func workOf(t *testing.T, page string) string {
	t.Helper()
	w := workSection.FindString(page)
	if w == "" {
		t.Fatalf("expected a work section on the page:\n%s", page)
	}
	return w
}

// The work section tells a branch's story in words: nothing yet, then its commit, its
// diffstat, its push refused with the remote's reason, and the end of the setup's
// output (escaped, its first lines left out).
func TestTheWorkSectionTellsTheBranchsStory(t *testing.T) {
	// The branch's git runs through a wrapper that counts its calls.
	dir := t.TempDir()
	git := filepath.Join(dir, "git-counter")
	if err := os.WriteFile(git, []byte("#!/bin/sh\necho x >>"+dir+"/calls\nexec git \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "calls"))
		return len(b) / 2
	}
	s := newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		hubtest.WithConfig(func(c *hub.Config) { c.DiffGit = git }))
	ctx := context.Background()
	p, err := s.hub.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: s.hub.Account.ID,
		Repository: hubtest.HostedRepository(t, true), Push: true, Network: core.NetworkNone})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.hub.Service.Admin.PrepareProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	setup := `{"setup": "i=0; while [ $i -lt 45 ]; do i=$((i+1)); echo line $i; done; echo '<b>ready</b> & done'"}`
	if _, err := s.hub.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: p.ID, Environment: []byte(setup)}); err != nil {
		t.Fatal(err)
	}
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	s.signIn("ada-1")
	id := s.start("look around", "project", p.ID)
	page := s.waitPage("/app/workspaces/"+id, "echo: look around")
	work := workOf(t, page)
	for _, want := range []string{"No commits yet.", "No changes yet.", "Not pushed yet.", "None: this project opens no pull requests.",
		"The setup script's output: it finished", "Its last 40 lines; earlier ones are not shown."} {
		if !strings.Contains(work, want) {
			t.Errorf("expected %q in the work section before any commit:\n%s", want, work)
		}
	}
	tail := setupTail.FindStringSubmatch(work)
	if tail == nil || !strings.HasPrefix(tail[1], "line 7\n") || !strings.HasSuffix(tail[1], "line 45\n&lt;b&gt;ready&lt;/b&gt; &amp; done") {
		t.Errorf("expected the setup's last 40 lines, escaped, got %q", tail)
	}

	v := url.Values{"csrf": {csrfOf(t, page)}, "key": {formKeyField.FindStringSubmatch(page)[1]}, "text": {"write hello"}}
	if code, _, body := s.post("/app/workspaces/"+id+"/messages", v); code != 200 {
		t.Fatalf("expected the message sent, got %d:\n%s", code, body)
	}
	// The reply's words show as the agent says them, before the turn is recorded with
	// its push: wait for the push.
	work = workOf(t, s.waitPage("/app/workspaces/"+id, "<strong>The push was refused</strong>"))
	for _, want := range []string{"1 commit on the branch:", `1 file changed, <span class="add">1 insertion</span>, <span class="del">0 deletions</span>`,
		"<strong>The push was refused</strong>: ", "protected: pushes to this repository need review"} {
		if !strings.Contains(work, want) {
			t.Errorf("expected %q in the work section after the commit:\n%s", want, work)
		}
	}
	ws := s.hub.Call("GET", "/v1/api/workspaces/"+id, s.hub.Key, nil).Expect(t, 200, "").Body["workspace"].(map[string]any)
	if m := commitLine.FindStringSubmatch(work); m == nil || !strings.HasPrefix(fmt.Sprint(ws["headCommit"]), m[1]) {
		t.Errorf("expected the commit named by its subject and short hash (head %v):\n%s", ws["headCommit"], work)
	}
	// The page is read often (on each of a turn's events): a head already counted is
	// shown from what was kept, without git.
	before := calls()
	for range 3 {
		if page := s.page("/app/workspaces/" + id); !strings.Contains(page, "1 commit on the branch:") {
			t.Fatalf("expected the commit counted again:\n%s", workOf(t, page))
		}
	}
	if after := calls(); before == 0 || after != before {
		t.Errorf("expected git run for the first count only, got %d calls before and %d after", before, after)
	}
	// A turn of more steps than the page reads leaves the setup's output behind them:
	// it is still shown.
	v.Set("key", formKeyField.FindStringSubmatch(s.page("/app/workspaces/" + id))[1])
	v.Set("text", "steps 160")
	if code, _, body := s.post("/app/workspaces/"+id+"/messages", v); code != 200 {
		t.Fatalf("expected the message sent, got %d:\n%s", code, body)
	}
	work = workOf(t, s.waitPage("/app/workspaces/"+id, "did 160 steps"))
	if tail := setupTail.FindStringSubmatch(work); tail == nil || !strings.HasPrefix(tail[1], "line 7\n") {
		t.Errorf("expected the setup's output shown after a turn of many steps:\n%s", work)
	}
}
