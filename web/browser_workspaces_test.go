package web_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/browsertest"
	"github.com/wshub/wshub/internal/testkit/eventually"
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
	b.FillByLabel(t, "What should the agent do?", "Add a README\n\nIt should say **done**.")
	b.FillByLabel(t, "Model", "test-model")
	if code := b.Submit(t, `form[action="/app/workspaces"]`); code != http.StatusOK || !strings.HasPrefix(pathOf(t, b), "/app/workspaces/ws_") {
		t.Fatalf("expected the new workspace's page, got %d at %s", code, b.URL(t))
	}
	page := b.URL(t)
	// The page is drawn on the server: read it again until the reply is there.
	reloadUntil(t, b, page, "echo: Add a README")
	if meta := b.Text(t, ".message.user .meta"); !strings.Contains(meta, "Ada Lovelace") {
		t.Errorf("expected the prompt by Ada, got %q", meta)
	}
	// The prompt's paragraphs are spaced as the reply's, its newlines between them not
	// read as blank lines.
	var gaps []float64
	b.Eval(t, `[".text", ".reply"].map(c => { const p = document.querySelectorAll(c + " p");
		return p[1].getBoundingClientRect().top - p[0].getBoundingClientRect().bottom })`, &gaps)
	if len(gaps) != 2 || gaps[0] != gaps[1] {
		t.Errorf("expected the prompt's paragraphs spaced as the reply's, got gaps %v px", gaps)
	}
	picture("workspace")
	// Anything here that ran would set a flag or open a dialog (which would hold the
	// page, and the test's next step, until it timed out).
	b.FillByLabel(t, "Message", "say **done** <img src=x onerror=window.__y=1> <script>window.__x=1</script> "+
		"<img src=x onerror=alert(1)> [x](javascript:alert(1)) <script>alert(1)</script>")
	if code := b.Follow(t, `#send button[type="submit"]`); code != http.StatusOK {
		t.Fatalf("expected the message sent, got %d", code)
	}
	reloadUntil(t, b, page, "echo: say")
	var inert bool
	b.Eval(t, `window.__x === undefined && window.__y === undefined &&
		document.querySelectorAll(".reply img, .reply script, .text img, .text script, a[href^='javascript:']").length === 0 &&
		[...document.querySelectorAll(".reply strong")].every(e => e.textContent === "done") &&
		[...document.querySelectorAll(".text strong")].every(e => e.textContent === "done") &&
		document.querySelectorAll(".reply strong").length === 2`, &inert)
	if !inert {
		t.Errorf("expected the prompts and the replies rendered from Markdown with nothing run or embedded: %q", b.Text(t, "main"))
	}
	b.Open(t, s.hub.URL+"/app/workspaces?mine=1")
	if list := b.Text(t, "table"); !strings.Contains(list, strings.TrimPrefix(page, s.hub.URL+"/app/workspaces/")) || !strings.Contains(list, "Ada Lovelace") {
		t.Errorf("expected the workspace among Ada's, got %q", list)
	}
	// Times read in words in the reader's zone, the exact UTC time on hover.
	var readable bool
	b.Eval(t, `(() => { const e = document.querySelector("table time");
		return /^(just now|\d+ min ago)$/.test(e.textContent) && / UTC$/.test(e.title) })()`, &readable)
	if !readable {
		t.Errorf("expected the last activity in words with its UTC time on hover: %q", b.Text(t, "table"))
	}
	picture("workspace-list")

	// The work: a turn that writes a file of one long line under a long name, the
	// work section that tells it, and its diff.
	long := strings.Repeat("long", 50)
	b.Open(t, s.hub.URL+"/app/workspaces/new")
	b.FillByLabel(t, "What should the agent do?", "write "+long)
	b.FillByLabel(t, "Model", "test-model")
	b.Submit(t, `form[action="/app/workspaces"]`)
	b.WaitUntil(t, `document.querySelector(".conversation").textContent.includes("wrote `+long+`.txt")`)
	reloadUntil(t, b, b.URL(t), "1 commit on the branch")
	if work := b.Text(t, "#work"); !strings.Contains(work, "1 file changed, 1 insertion, 0 deletions") || !strings.Contains(work, "write longlonglong") {
		t.Errorf("expected the work section to count the change and name the commit, got %q", work[strings.Index(work, "Commits"):])
	}
	fitsAtBothWidths(t, b, "#work")
	if code := b.Follow(t, `a[href$="/diff"]`); code != http.StatusOK || !strings.Contains(b.Text(t, "main"), long+".txt") {
		t.Fatalf("expected the diff with %s.txt, got %d: %q", long, code, b.Text(t, "main"))
	}
	fitsAtBothWidths(t, b, ".patch-scroll")
	var scrolls bool
	b.AtWidth(t, browsertest.Phone, func() {
		b.Eval(t, `(() => { const e = document.querySelector(".patch-scroll"); return e.scrollWidth > e.clientWidth })()`, &scrolls)
	})
	if !scrolls {
		t.Errorf("expected the long line to scroll inside its block at %dpx", browsertest.Phone)
	}
	picture("workspace-diff")
}

// fitsAtBothWidths checks the page at a desktop's and a phone's width: axe-core finds
// nothing serious, what selector names is shown, and nothing scrolls the page sideways.
func fitsAtBothWidths(t *testing.T, b *browsertest.Browser, selector string) {
	t.Helper()
	for _, width := range []int{browsertest.Desktop, browsertest.Phone} {
		b.AtWidth(t, width, func() {
			b.Axe(t)
			var fits bool
			b.Eval(t, `(() => { const e = document.querySelector(`+"`"+selector+"`"+`), r = e && e.getBoundingClientRect();
				return !!r && r.width > 0 && r.right <= window.innerWidth + 1 && document.documentElement.scrollWidth <= window.innerWidth })()`, &fits)
			if !fits {
				// What is wider than its box and does not scroll is what widens the page.
				var wide string
				b.Eval(t, `JSON.stringify([...document.querySelectorAll("main *")].filter(e => e.scrollWidth > e.clientWidth + 1 &&
					getComputedStyle(e).overflowX == "visible").map(e => e.tagName + "." + e.className).slice(0, 8))`, &wide)
				t.Errorf("expected %s shown and the page not wider than the window at %dpx; too wide: %s", selector, width, wide)
			}
		})
	}
}

// In a real browser, the page follows the turn without being loaded again: the ask
// appears as the agent asks it, with its steps before any reply; Allow decides it; a
// deny through the API shows, and so does the reply. Stop, pressed while a turn runs,
// ends it interrupted.
func TestInABrowserTheWorkspacePageFollowsTheTurnLive(t *testing.T) {
	s := workingSite(t)
	b := browsertest.Start(t)
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	s.signInInBrowser(b, "ada-1")
	b.Open(t, s.hub.URL+"/app/workspaces/new")
	b.FillByLabel(t, "What should the agent do?", "ask first second")
	b.FillByLabel(t, "Model", "test-model")
	b.Fill(t, "#start-mode", "approval-required")
	if code := b.Submit(t, `form[action="/app/workspaces"]`); code != http.StatusOK {
		t.Fatalf("expected the workspace's page, got %d", code)
	}
	id := strings.TrimPrefix(pathOf(t, b), "/app/workspaces/")
	b.WaitFor(t, `.ask button[value="allow"]`)
	if steps := b.Text(t, "#steps"); !strings.Contains(steps, "before first") || strings.Contains(b.Text(t, ".conversation"), "decision") {
		t.Fatalf("expected the step and the ask before any reply, got %q", steps)
	}
	if code := b.Follow(t, `.ask button[value="allow"]`); code != http.StatusOK {
		t.Fatalf("expected Allow to return to the page, got %d at %s", code, b.URL(t))
	}
	var mark bool
	b.Eval(t, `window.__same = true`, &mark)
	b.WaitUntil(t, `document.querySelector(".ask") !== null && document.querySelector("#steps").textContent.includes("rm -rf second")`)
	var asks []any
	for _, raw := range s.hub.Call("GET", "/v1/api/workspaces/"+id+"/events?afterSeq=0", s.hub.Key, nil).Body["events"].([]any) {
		if e := raw.(map[string]any); e["type"] == "approval_requested" {
			asks = append(asks, e["approvalId"])
		}
	}
	if len(asks) != 2 {
		t.Fatalf("expected two asks, got %v", asks)
	}
	s.hub.Call("POST", "/v1/api/workspaces/"+id+"/approvals/"+asks[1].(string), s.hub.Key, map[string]any{"decision": "deny"}).Expect(t, 200, "")
	b.WaitUntil(t, `document.querySelector(".conversation").textContent.includes('"decision":"deny"')`)
	var same bool
	b.Eval(t, `window.__same === true && document.documentElement.classList.contains("js")`, &same)
	if !same || !strings.Contains(b.Text(t, ".conversation"), `"decision":"allow"`) {
		t.Errorf("expected both decisions in the reply, drawn without loading the page again: %q", b.Text(t, ".conversation"))
	}

	// A turn that takes its time, stopped from the page.
	b.Open(t, s.hub.URL+"/app/workspaces/new")
	b.FillByLabel(t, "What should the agent do?", "paced 30 5")
	b.FillByLabel(t, "Model", "test-model")
	b.Submit(t, `form[action="/app/workspaces"]`)
	b.WaitUntil(t, `document.querySelector("#steps") !== null && document.querySelector("#steps").textContent.includes("step 1")`)
	// The time the agent has been working ticks between the live part's redraws (each
	// step draws it again, with the server's figure): the same element's text changes.
	b.WaitUntil(t, `(() => { const e = document.querySelector("time.elapsed");
		if (!e) return false;
		if (window.__e !== e) { window.__e = e; window.__t = e.textContent; return false; }
		return e.textContent !== window.__t; })()`)
	b.Follow(t, `form[action$="/stop"] button`)
	b.WaitUntil(t, `document.querySelector(".message.assistant .meta") !== null &&
		document.querySelector(".message.assistant .meta").textContent.includes("interrupted")`)
}

// In a real browser with JavaScript off, a workspace's page still reads and sends:
// its forms are plain HTML, and the reply is there when the page is loaded again.
func TestInABrowserWithoutJavaScriptAWorkspaceStillReadsAndSends(t *testing.T) {
	s := workingSite(t)
	b := browsertest.Start(t)
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	s.signInInBrowser(b, "ada-1")
	b.DisableScripts(t)
	b.Open(t, s.hub.URL+"/app/workspaces/new")
	b.FillByLabel(t, "What should the agent do?", "first words")
	b.FillByLabel(t, "Model", "test-model")
	if code := b.Follow(t, `form[action="/app/workspaces"] button[type="submit"]`); code != http.StatusOK {
		t.Fatalf("expected the workspace's page, got %d at %s", code, b.URL(t))
	}
	page := b.URL(t)
	reload := func(want string) { t.Helper(); reloadUntil(t, b, page, want) }
	reload("echo: first words")
	b.FillByLabel(t, "Message", "second words")
	if code := b.Follow(t, `#send button[type="submit"]`); code != http.StatusOK {
		t.Fatalf("expected the page again after sending, got %d", code)
	}
	reload("echo: second words")
	// The page's own script did not run (app.js marks the document when it does).
	var ran bool
	b.Eval(t, `document.documentElement.classList.contains("js")`, &ran)
	if ran {
		t.Errorf("expected the page's script off, but it ran")
	}
	// Without the script, times stay in UTC.
	if meta := b.Text(t, ".message.user .meta"); !strings.HasSuffix(meta, "UTC · "+strings.Fields(meta)[len(strings.Fields(meta))-1]) {
		t.Errorf("expected the message's time in UTC, got %q", meta)
	}
}

// In a real browser, a workspace started with a file: the page starts it, uploads the
// file and sends the prompt with it; the API lists the workspace, the agent sees the
// file, and its reply appears on the page without a reload.
func TestInABrowserAWorkspaceStartsWithAFile(t *testing.T) {
	s := workingSite(t)
	b := browsertest.Start(t)
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	s.signInInBrowser(b, "ada-1")
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("hello from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.Open(t, s.hub.URL+"/app/workspaces/new")
	b.FillByLabel(t, "What should the agent do?", "attachments")
	b.FillByLabel(t, "Model", "test-model")
	b.Attach(t, "#start-files", notes)
	b.Click(t, `form[action="/app/workspaces"] button[type="submit"]`)
	b.WaitUntil(t, `location.pathname.startsWith("/app/workspaces/ws_") && document.querySelector(".conversation") !== null &&
		document.querySelector(".conversation").textContent.includes("hello from a file")`)
	if files := b.Text(t, ".message.user .files"); !strings.Contains(files, "notes.txt") {
		t.Errorf("expected the file shown with the prompt, got %q", files)
	}
	list := s.hub.Call("GET", "/v1/api/workspaces", s.hub.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
	if len(list) != 1 {
		t.Fatalf("expected one workspace, got %d", len(list))
	}
	id := list[0].(map[string]any)["workspaceId"].(string)
	msgs := s.hub.Call("GET", "/v1/api/workspaces/"+id+"/messages", s.hub.Key, nil).Expect(t, 200, "").Body["messages"].([]any)
	first := msgs[0].(map[string]any)
	if files, _ := first["attachments"].([]any); first["text"] != "attachments" || len(files) != 1 {
		t.Errorf("expected the prompt with its one file, got %v", first)
	}
}

// In a real browser, a workspace started from a Slack thread is in the list with the
// Slack person who started it, and its page links to the thread.
func TestInABrowserASlackWorkspaceShowsItsAuthorAndThread(t *testing.T) {
	s := newSite(t)
	b := browsertest.Start(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleMember)
	ws := s.slackWorkspace()
	s.signInInBrowser(b, "ada-1")
	b.Open(t, s.hub.URL+"/app/workspaces?origin=slack")
	if row := b.Text(t, "tbody tr"); !strings.Contains(row, ws.ID) || !strings.Contains(row, "Grace Hopper (slack)") {
		t.Errorf("expected the Slack workspace listed with Grace, got %q", row)
	}
	b.Follow(t, `a[href="/app/workspaces/`+ws.ID+`"]`)
	var link string
	b.Eval(t, `document.querySelector("a[href*='slack.com']").href`, &link)
	if link != "https://app.slack.com/client/T1/C1/thread/C1-1700000000.000100" {
		t.Errorf("expected a link to the thread, got %q", link)
	}
}

// reloadUntil reads the page's main until it holds want, opening the page again
// between reads (it is drawn on the server), for a minute at most.
func reloadUntil(t *testing.T, b *browsertest.Browser, page, want string) {
	t.Helper()
	eventually.NoError(t, time.Minute, fmt.Sprintf("%q on the page", want), func() error {
		if main := b.Text(t, "main"); !strings.Contains(main, want) {
			b.Open(t, page)
			return fmt.Errorf("main read %q", main)
		}
		return nil
	})
}
