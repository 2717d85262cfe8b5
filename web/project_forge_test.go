package web_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// An owner turns a project's forge events on from its fix page: the page names the
// webhook's address, a first setting without the secret is refused in words, the
// secret is sealed and never shown again, an empty secret later keeps it, and off
// drops it all. Each change is in the audit log, without the secret.
func TestAnOwnerSetsAProjectsForgeEvents(t *testing.T) {
	t.Parallel()
	s, csrf := projectsSite(t)
	ctx := context.Background()
	gitea := core.ForgeGitea
	p, err := s.hub.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: s.hub.Account.ID,
		Repository: "https://git.example.com/team/app.git", Forge: core.ProjectForgeInput{Forge: &gitea}})
	if err != nil {
		t.Fatal(err)
	}
	path := "/app/projects/" + p.ID + "/fix"
	code, _, page := s.get(path)
	if code != 200 || !strings.Contains(page, "/forge/gitea/events</code>") || strings.Contains(page, `name="events" type="checkbox" value="on" checked`) {
		t.Fatalf("expected the fix page to offer forge events, off, naming the webhook's address, got %d:\n%s", code, page)
	}
	form := func(secret, label, checks string) url.Values {
		return url.Values{"csrf": {csrf}, "events": {"on"}, "handle": {"@helper"}, "trigger_label": {label},
			"fix_checks": {checks}, "secret": {secret}}
	}
	forgePath := "/app/projects/" + p.ID + "/forge"
	code, _, page = s.post(forgePath, form("", "", "0"))
	if code != 400 || !strings.Contains(noticeOf(page), "the webhook's secret") {
		t.Fatalf("expected events without a secret refused in words, got %d (%s)", code, noticeOf(page))
	}
	code, _, page = s.post(forgePath, form("s3cret-hook-41", "wshub", "101"))
	if code != 400 || !strings.Contains(noticeOf(page), "0 (off) to 100") || strings.Contains(page, "s3cret-hook-41") {
		t.Fatalf("expected 101 checks refused in words without the secret echoed, got %d (%s)", code, noticeOf(page))
	}
	if _, err := s.hub.PG().GetForgeHook(ctx, p.ID); err == nil {
		t.Fatal("a refused form stored forge events")
	}

	code, where, page := s.post(forgePath, form("s3cret-hook-41", "wshub", "2"))
	if code != 200 || where != path || noticeOf(page) != "Saved the forge events." || strings.Contains(page, "s3cret-hook-41") ||
		!strings.Contains(page, `value="@helper"`) || !strings.Contains(page, `value="wshub"`) || !strings.Contains(page, `value="2"`) {
		t.Fatalf("expected the events saved and shown without the secret, got %d at %s (%s):\n%s", code, where, noticeOf(page), page)
	}
	h, err := s.hub.PG().GetForgeHook(ctx, p.ID)
	if err != nil || h.Handle != "@helper" || h.TriggerLabel != "wshub" || h.FixChecks != 2 || len(h.SealedSecret) == 0 ||
		bytes.Contains(h.SealedSecret, []byte("s3cret-hook-41")) {
		t.Fatalf("expected the hook stored with its secret sealed, got %+v (%v)", h, err)
	}
	sealed := h.SealedSecret

	// Saved again without a secret: the one saved is kept.
	if code, _, page := s.post(forgePath, form("", "", "0")); code != 200 {
		t.Fatalf("expected a change without a secret saved, got %d (%s)", code, noticeOf(page))
	}
	if h, err := s.hub.PG().GetForgeHook(ctx, p.ID); err != nil || !bytes.Equal(h.SealedSecret, sealed) || h.TriggerLabel != "" {
		t.Fatalf("expected the secret kept and the label cleared, got %+v (%v)", h, err)
	}

	code, _, page = s.post(forgePath, url.Values{"csrf": {csrf}})
	if code != 200 || !strings.Contains(noticeOf(page), "Forge events are off") {
		t.Fatalf("expected events turned off, got %d (%s)", code, noticeOf(page))
	}
	if _, err := s.hub.PG().GetForgeHook(ctx, p.ID); err == nil {
		t.Fatal("expected the hook gone once events are off")
	}
	entries, err := s.hub.PG().ListAudit(ctx, s.hub.Account.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range entries {
		if e.Action == core.AuditForgeEventsChanged {
			changes = append(changes, e.Detail)
		}
		if strings.Contains(e.Detail, "s3cret") {
			t.Errorf("the audit log holds the secret: %+v", e)
		}
	}
	if len(changes) != 3 || changes[0] != "forge events off" || !strings.Contains(changes[2], "webhook secret replaced") {
		t.Errorf("expected three audited changes, newest first, got %q", changes)
	}
}
