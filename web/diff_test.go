package web_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// addedLine is how the diff page shows an added line: a + for the eye, words for a
// screen reader, and the line.
func addedLine(text string) string {
	return `<span class="visually-hidden">added: </span><span aria-hidden="true">+</span>` + text + `</td>`
}

// seeTheWork starts a workspace whose agent writes hello.txt, and reads its diff page
// from the link on the workspace's page.
func seeTheWork(t *testing.T, s *site) {
	t.Helper()
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	if code, _, _ := s.signIn("ada-1"); code != 200 {
		t.Fatalf("expected Ada signed in, got %d", code)
	}
	id := s.start("write hello")
	page := s.waitPage("/app/workspaces/"+id, "wrote hello.txt")
	link := `href="/app/workspaces/` + id + `/diff"`
	if !strings.Contains(page, link) || !strings.Contains(page, "See the changes") {
		t.Fatalf("expected the workspace's page to link to its changes (%s):\n%s", link, page)
	}
	diff := s.page("/app/workspaces/" + id + "/diff")
	for _, want := range []string{"1 file changed", `<a href="#file-1"><code>hello.txt</code></a>`, `<td>added</td>`,
		`<td class="add">+1</td>`, `<td class="del">−0</td>`, `id="file-1"`, "@@ -0,0 &#43;1 @@", addedLine("hello")} {
		if !strings.Contains(diff, want) {
			t.Errorf("expected %q on the diff page:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, `rel="next"`) {
		t.Errorf("expected one page of changes, got a next page:\n%s", diff)
	}
}

// A member sees what the agent wrote: a local workspace's checkout against its base.
func TestTheDiffPageShowsALocalWorkspacesWork(t *testing.T) {
	seeTheWork(t, workingSite(t))
}

// A remote workspace's work is read from the hub's copy of its branch, which the
// runtime's uploads add to.
func TestTheDiffPageShowsAProcessWorkspacesWork(t *testing.T) {
	seeTheWork(t, newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		hubtest.WithProcessProvider(t), hubtest.WithConfig(func(c *hub.Config) { c.DefaultProvider = machines.ProcessProviderID })))
}

// More changed files than a page: the list names them all, the patches are paged,
// and the pages link to each other.
func TestTheDiffPagePagesManyFiles(t *testing.T) {
	n := core.DiffFilesPerPage + 7
	agent := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); n=$(printf %%03d $i); echo "line $i" > "f $n.txt"; done; echo made files`, n)
	s := newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", agent))
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	if code, _, _ := s.signIn("ada-1"); code != 200 {
		t.Fatalf("expected Ada signed in, got %d", code)
	}
	id := s.start("make files")
	s.waitPage("/app/workspaces/"+id, "made files")
	base := "/app/workspaces/" + id + "/diff"
	first := s.page(base)
	rows := regexp.MustCompile(`<a href="[^"]*#file-\d+"><code>f \d{3}\.txt</code></a>`).FindAllString(first, -1)
	if len(rows) != n {
		t.Errorf("expected the list to name all %d files, got %d", n, len(rows))
	}
	for _, want := range []string{fmt.Sprintf("%d files changed", n), `href="` + base + `?page=2" rel="next"`, "Page 1 of 2",
		`href="` + base + `?page=2#file-51"><code>f 051.txt</code>`, addedLine("line 50")} {
		if !strings.Contains(first, want) {
			t.Errorf("expected %q on the first page:\n%s", want, first)
		}
	}
	if strings.Contains(first, addedLine("line 51")) {
		t.Errorf("expected file 51's patch on the second page only")
	}
	second := s.page(base + "?page=2")
	for _, want := range []string{"Page 2 of 2", `href="` + base + `?page=1" rel="prev"`, `id="file-51"`, addedLine("line 51"), addedLine(fmt.Sprintf("line %d", n))} {
		if !strings.Contains(second, want) {
			t.Errorf("expected %q on the second page:\n%s", want, second)
		}
	}
	if strings.Contains(second, addedLine("line 50")) || strings.Contains(second, `rel="next"`) {
		t.Errorf("expected the second page to hold files 51 to %d only, and to be the last", n)
	}
	for _, bad := range []string{"?page=3", "?page=0", "?page=two"} {
		if code, _, body := s.get(base + bad); code != 400 {
			t.Errorf("expected %s refused with 400, got %d:\n%s", bad, code, body)
		}
	}
}

// More than a few changed files are listed by directory, a directory of one directory
// named as one, each file linked to its patch; the counts say their nouns in the
// number they need.
func TestTheDiffPageListsManyFilesAsATree(t *testing.T) {
	agent := `mkdir -p src/app/web docs && echo a > src/app/web/page.go && printf 'b\nc\n' > src/app/web/style.css && ` +
		`echo d > src/main.go && echo e > docs/guide.md && echo f > one.txt && echo g > two.txt && echo made files`
	s := newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", agent))
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	s.signIn("ada-1")
	id := s.start("make files")
	s.waitPage("/app/workspaces/"+id, "made files")
	diff := s.page("/app/workspaces/" + id + "/diff")
	tree := regexp.MustCompile(`(?s)<nav class="diff-tree".*?</nav>`).FindString(diff)
	for _, want := range []string{`6 files changed, <span class="add">7 insertions</span>, <span class="del">0 deletions</span>`,
		`<summary><code>src/</code></summary>`, `<summary><code>app/web/</code></summary>`, `<summary><code>docs/</code></summary>`,
		`<a href="#file-3"><code>page.go</code></a>`, `<a href="#file-4"><code>style.css</code></a>`, `<a href="#file-1"><code>guide.md</code></a>`,
		`<a href="#file-2"><code>one.txt</code></a>`, `<span class="visually-hidden">2 insertions, 0 deletions</span>`} {
		if !strings.Contains(tree, want) {
			t.Errorf("expected %q in the file tree:\n%s", want, tree)
		}
	}
	if strings.Contains(diff, `<table class="diff-files">`) {
		t.Errorf("expected the tree instead of the table of files")
	}
}
