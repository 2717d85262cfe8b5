package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/browsertest"
)

// picture checks the page with axe-core in the light and the dark scheme, at desktop
// and phone widths, checks that it does not scroll sideways at either, and pictures
// it at both widths (name-1280.png), in the dark scheme too for the main pages
// (name-dark-390.png). The tab is left light, at the desktop width.
func picture(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	for _, scheme := range []string{browsertest.Dark, browsertest.Light} {
		b.ColorScheme(t, scheme)
		shot := name
		if scheme == browsertest.Dark {
			shot += "-dark"
		}
		for _, width := range []int{browsertest.Phone, browsertest.Desktop} {
			b.Width(t, width)
			b.Axe(t)
			if wide := b.WiderThanTheWindow(t); len(wide) > 0 {
				t.Errorf("expected %s to fit %dpx (%s), but it scrolls sideways: %s", b.URL(t), width, scheme, strings.Join(wide, "; "))
			}
			if scheme == browsertest.Light || mainPages[name] {
				b.Screenshot(t, shot, width)
			}
		}
	}
}

// mainPages are those pictured in the dark scheme too: every page is checked in it,
// but a picture of each would only weigh down the repository.
var mainPages = map[string]bool{"workspace-list": true, "workspace": true, "projects": true, "usage": true, "keys": true}

// screenshotDir is where the browser tests save their pictures: the test's own
// directory, or WSHUB_APP_SCREENSHOTS (docs/app, to refresh the README's).
func screenshotDir() string { return os.Getenv("WSHUB_APP_SCREENSHOTS") }

// In a real browser: an owner signs in on the provider's login page, creates a key
// (shown once, with a Copy button), sees it listed, invites a person and reads the
// members, the audit log and the usage page; makes, changes and deletes a schedule; a member is kept
// from the keys; the invited person signs
// in to their invitation and accepts it. Every page passes axe-core and is pictured at desktop and phone widths.
func TestInABrowserAnOwnerSignsInAndManagesKeys(t *testing.T) {
	s := newSite(t)
	b := browsertest.Start(t)
	b.ScreenshotDir = screenshotDir()
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleOwner)
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	s.person("cy-1", "cy@example.com", "Cy", "")
	s.idp.SignInAs("") // the provider shows its login page: the browser picks the user

	picture := func(name string) { picture(t, b, name) }

	if code := b.Open(t, s.hub.URL+"/app/"); code != http.StatusOK || !strings.HasSuffix(b.URL(t), "/app/signin") {
		t.Fatalf("expected the sign-in page, got %d at %s", code, b.URL(t))
	}
	picture("signin")
	b.Click(t, "a.button")
	b.WaitFor(t, `button[value="ada-1"]`)
	b.Click(t, `button[value="ada-1"]`)
	b.WaitUntil(t, `location.pathname === "/app/workspaces"`)
	picture("workspaces")
	// Every status badge, in both themes: its words on its colour pass axe-core's
	// contrast check, though a new account's list shows none of them.
	badges, _ := json.Marshal([]core.Badge{core.BadgeQueued, core.BadgeSettingUp, core.BadgeWorking, core.BadgeApproval,
		core.BadgeIdle, core.BadgeFailed, core.BadgePaused, core.BadgeArchived, core.BadgeDeleting})
	var shown int
	b.Eval(t, `(names => {
		const p = document.createElement("p");
		for (const n of names) {
			const s = document.createElement("span");
			s.className = "badge badge-" + n.replaceAll(" ", "-");
			s.textContent = n;
			p.append(s, " ");
		}
		document.querySelector("main").append(p);
		return p.children.length;
	})(`+string(badges)+`)`, &shown)
	if shown != 9 {
		t.Fatalf("expected the 9 badges added to the page, got %d", shown)
	}
	for _, scheme := range []string{browsertest.Dark, browsertest.Light} {
		b.ColorScheme(t, scheme)
		b.Axe(t)
	}
	b.Open(t, s.hub.URL+"/app/keys")
	if who := b.Text(t, ".who"); !strings.Contains(who, "Ada Lovelace") || !strings.Contains(who, "owner") {
		t.Errorf("expected the header to name the owner, got %q", who)
	}
	picture("keys")
	// On a phone each key is a card whose cells say what they hold; on a desktop
	// the column's heading does.
	cellLabel := `(c => c ? getComputedStyle(c, "::before").content : "no labelled cell")(document.querySelector('td[data-label="Created by"]'))`
	b.Width(t, browsertest.Phone)
	var card struct{ Row, Label string }
	b.Eval(t, `({row: getComputedStyle(document.querySelector("tbody tr")).display, label: `+cellLabel+`})`, &card)
	if card.Row != "block" || card.Label != `"Created by"` {
		t.Errorf("expected each key a card with its cells labelled at 390px, got %+v", card)
	}
	b.Width(t, browsertest.Desktop)
	if b.Eval(t, cellLabel, &card.Label); card.Label != "none" {
		t.Errorf("expected the cells unlabelled at 1280px, under their headings, got %s", card.Label)
	}

	b.FillByLabel(t, "Name", "laptop")
	if code := b.Submit(t, "form.create"); code != http.StatusCreated {
		t.Fatalf("expected the key created, got %d", code)
	}
	b.WaitFor(t, "#new-key")
	key := b.Value(t, "#new-key")
	if !strings.HasPrefix(key, "svc_") || !strings.Contains(b.Text(t, "#created-title"), "laptop") ||
		!strings.Contains(b.Text(t, ".created"), "you will not see it again") {
		t.Errorf("expected the new key's panel, got %q with %q", b.Text(t, ".created"), key)
	}
	b.WaitFor(t, "button.copy")
	picture("key-created")
	b.Open(t, s.hub.URL+"/app/keys")
	// The key is a field's value, which the page's text does not hold: the markup is read.
	var html string
	b.Eval(t, `document.documentElement.outerHTML`, &html)
	if strings.Contains(html, key) {
		t.Errorf("the key shows again after the page was left")
	}
	// The page that asks before a revoke.
	if code := b.Follow(t, `a[aria-label^="Revoke "]`); code != 200 {
		t.Fatalf("expected the page that asks before a revoke, got %d", code)
	}
	picture("key-revoke")

	b.Open(t, s.hub.URL+"/app/webhooks")
	b.WaitFor(t, "#hook-url")
	picture("webhooks")
	b.Open(t, s.hub.URL+"/app/members")
	b.WaitFor(t, "#invite-email")
	b.FillByLabel(t, "Email", "cy@example.com")
	if code := b.Submit(t, "form.create"); code != http.StatusOK || !strings.Contains(b.Text(t, "main"), "cy@example.com") {
		t.Fatalf("expected Cy's invitation listed, got %d: %q", code, b.Text(t, "main"))
	}
	picture("members")
	b.Open(t, s.hub.URL+"/app/audit")
	if !strings.Contains(b.Text(t, "main"), "key.created") {
		t.Errorf("expected the new key in the audit log, got %q", b.Text(t, "main"))
	}
	picture("audit")
	b.Open(t, s.hub.URL+"/app/usage")
	if !strings.Contains(b.Text(t, "main"), "No workspace was started and no turn ran") {
		t.Errorf("expected the usage page's empty state in words, got %q", b.Text(t, "main"))
	}
	picture("usage")
	b.Open(t, s.hub.URL+"/app/schedules")
	b.FillByLabel(t, "Name", "weekly dependencies")
	b.FillByLabel(t, "Model", "test-model")
	b.FillByLabel(t, "Prompt", "Update the dependencies and open a pull request.")
	b.FillByLabel(t, "When (cron: minute hour day month weekday, such as 0 9 * * 1)", "0 9 * * 1")
	if code := b.Submit(t, `form[action="/app/schedules"]`); code != http.StatusCreated || !strings.Contains(b.Text(t, "tbody"), "weekly dependencies") {
		t.Fatalf("expected the schedule made and listed, got %d: %q", code, b.Text(t, "main"))
	}
	picture("schedules")
	// Its change form, filled from it: a new expression is saved; then its delete,
	// after the page that asks first.
	if code := b.Follow(t, `a[aria-label="Change weekly dependencies"]`); code != http.StatusOK ||
		b.Value(t, "#schedule-prompt") != "Update the dependencies and open a pull request." {
		t.Fatalf("expected the change form filled from the schedule, got %d: %q", code, b.Text(t, "main"))
	}
	picture("schedule-edit")
	b.FillByLabel(t, "When (cron: minute hour day month weekday, such as 0 9 * * 1)", "0 8 * * 1-5")
	if code := b.Submit(t, `form[action$="/edit"]`); code != http.StatusOK || !strings.Contains(b.Text(t, "tbody"), "0 8 * * 1-5") {
		t.Fatalf("expected the change saved and listed, got %d: %q", code, b.Text(t, "main"))
	}
	if code := b.Follow(t, `a[aria-label="Delete weekly dependencies"]`); code != http.StatusOK {
		t.Fatalf("expected the page that asks before a delete, got %d", code)
	}
	if code := b.Submit(t, `form[action$="/delete"]`); code != http.StatusOK || !strings.Contains(b.Text(t, "tbody"), "No schedules yet.") {
		t.Fatalf("expected the schedule deleted, got %d: %q", code, b.Text(t, "main"))
	}

	// The projects, and one project's secrets: one set, listed by name without its
	// value, and the page that asks before a remove.
	b.Open(t, s.hub.URL+"/app/projects")
	picture("projects")
	if code := b.Follow(t, `a[href$="/secrets"]`); code != http.StatusOK {
		t.Fatalf("expected the project's page, got %d", code)
	}
	b.FillByLabel(t, "Name", "NPM_TOKEN")
	b.FillByLabel(t, "Value", "npm-token-3f9a1c")
	b.Click(t, "#secret-agent")
	if code := b.Submit(t, `form[action$="/secrets"]`); code != http.StatusOK || !strings.Contains(b.Text(t, ".notice"), "Saved NPM_TOKEN.") {
		t.Fatalf("expected the secret saved, got %d: %q", code, b.Text(t, "main"))
	}
	b.Eval(t, `document.documentElement.outerHTML`, &html)
	if strings.Contains(html, "npm-token-3f9a1c") || !strings.Contains(b.Text(t, "tbody"), "the agent's turns") {
		t.Errorf("expected the secret listed for the agent too, without its value: %q", b.Text(t, "main"))
	}
	picture("project-secrets")
	if code := b.Follow(t, `a[aria-label="Remove NPM_TOKEN"]`); code != http.StatusOK {
		t.Fatalf("expected the page that asks before a remove, got %d", code)
	}
	picture("secret-remove")
	// The project's fix form, and the page that asks before a project's remove.
	b.Open(t, s.hub.URL+"/app/projects/"+s.hub.Project.ID+"/fix")
	b.WaitFor(t, "#fix-credential")
	picture("project-fix")
	b.Open(t, s.hub.URL+"/app/projects/"+s.hub.Project.ID+"/remove")
	picture("project-remove")

	// The session cookie is one a script cannot read.
	for _, c := range b.Cookies(t) {
		if c.Name == "wshub_session" && !c.HttpOnly {
			t.Errorf("the session cookie is readable by scripts: %+v", c)
		}
	}
	// signOutAndIn signs out, then in as subject on the provider's page, landing at path.
	signOutAndIn := func(subject, path string) {
		t.Helper()
		b.Submit(t, `form[action="/app/signout"]`)
		b.WaitUntil(t, `location.pathname === "/app/signin"`)
		b.Click(t, "a.button")
		b.WaitFor(t, fmt.Sprintf(`button[value=%q]`, subject))
		b.Click(t, fmt.Sprintf(`button[value=%q]`, subject))
		b.WaitUntil(t, fmt.Sprintf(`location.pathname === %q`, path))
	}

	// A member signs in and sees no keys.
	signOutAndIn("bob-1", "/app/workspaces")
	picture("member-workspaces")
	if code := b.Open(t, s.hub.URL+"/app/keys"); code != http.StatusForbidden {
		t.Errorf("expected the keys page refused to a member, got %d", code)
	}
	picture("refused")
	if keys, err := s.hub.Service.Admin.ListAPIKeys(context.Background(), s.hub.Account.ID); err != nil || len(keys) != 2 {
		t.Errorf("expected the hub's key and laptop, got %d (%v)", len(keys), err)
	}

	// Cy, invited, signs in to her invitation and accepts it.
	b.Open(t, s.hub.URL+"/app/workspaces")
	signOutAndIn("cy-1", "/app/invitations")
	picture("invitations")
	if code := b.Submit(t, `form[action$="/accept"]`); code != http.StatusOK || pathOf(t, b) != "/app/workspaces" ||
		!strings.Contains(b.Text(t, ".who"), "Cy · member of") {
		t.Fatalf("expected Cy in the account once she accepted, got %d at %s: %q", code, b.URL(t), b.Text(t, ".who"))
	}
}
