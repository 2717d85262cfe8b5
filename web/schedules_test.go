package web_test

import (
	"context"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// A member sees the account's schedules with their last runs, runs one now, pauses
// and resumes it; each change is in the audit log, by name.
func TestMembersRunPauseAndResumeSchedules(t *testing.T) {
	s := newSite(t)
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	in := core.ScheduleInput{Name: new(`deps <b>weekly</b>`), ProjectID: &s.hub.Project.ID, Agent: new("agent_1"), Model: new("m"),
		Prompt: new("update the dependencies"), Cron: new("0 9 * * 1"), TimeZone: new("Europe/Paris")}
	sc, err := s.hub.Service.Schedules.CreateSchedule(context.Background(), s.hub.Account, in)
	if err != nil {
		t.Fatal(err)
	}
	_, _, page := s.signIn("bob-1")
	csrf := csrfOf(t, page)
	if !strings.Contains(page, `href="/app/schedules"`) {
		t.Fatalf("expected a member's pages to link the schedules:\n%s", page)
	}
	code, _, page := s.get("/app/schedules?project=" + s.hub.Project.ID)
	if code != 200 || !strings.Contains(html.UnescapeString(page), `deps <b>weekly</b>`) || strings.Contains(page, "<b>weekly") ||
		!strings.Contains(page, "<code>0 9 * * 1</code> (Europe/Paris)") || !strings.Contains(page, "none yet") {
		t.Fatalf("expected the schedule listed, its name as text, with no runs, got %d:\n%s", code, page)
	}
	form := url.Values{"csrf": {csrf}, "project": {s.hub.Project.ID}}
	_, _, page = s.post("/app/schedules/"+sc.ID+"/run", form)
	if n := noticeOf(page); !strings.HasPrefix(n, "Started workspace ws_") || !strings.Contains(page, ": started") {
		t.Fatalf("expected the run now said and listed, got %q:\n%s", n, page)
	}
	_, _, page = s.post("/app/schedules/"+sc.ID+"/pause", form)
	if n := noticeOf(page); !strings.HasPrefix(n, "Paused") || !strings.Contains(page, `aria-label="Resume deps &lt;b&gt;weekly&lt;/b&gt;"`) {
		t.Fatalf("expected it paused with a Resume button, got %q:\n%s", n, page)
	}
	_, _, page = s.post("/app/schedules/"+sc.ID+"/resume", form)
	if n := noticeOf(page); !strings.HasPrefix(n, "Resumed") {
		t.Fatalf("expected it resumed, got %q", n)
	}
	if code, _, _ := s.post("/app/schedules/sch_0000000000000000/run", form); code != 404 {
		t.Errorf("expected an unknown schedule to be 404, got %d", code)
	}
	if got := auditedAs(t, s, "Bob", sc.ID); got != "schedule.run_now schedule.paused schedule.resumed" {
		t.Errorf("expected Bob's run, pause and resume audited, got %q", got)
	}
}

// A member makes a schedule on the page's form: one the parser refuses is said at the
// page's top with the form kept as sent, and nothing is made; a good one is listed,
// audited as the member, and its next tick said.
func TestAMemberMakesAScheduleInTheApp(t *testing.T) {
	s := newSite(t)
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	s.signIn("bob-1")
	_, _, page := s.get("/app/schedules")
	if !strings.Contains(page, `<form method="post" action="/app/schedules"`) || !strings.Contains(page, `value="`+s.hub.Project.ID+`"`) {
		t.Fatalf("expected the new-schedule form offering the account's project:\n%s", page)
	}
	form := url.Values{"csrf": {csrfOf(t, page)}, "name": {"nightly client"}, "project": {s.hub.Project.ID},
		"agent": {"agent_1"}, "model": {"m"}, "prompt": {"regenerate the client"}, "cron": {"0 3 * * * *"}, "timeZone": {"Europe/Paris"}}
	code, _, page := s.post("/app/schedules", form)
	if code != 400 || !strings.Contains(noticeOf(page), "cron") || !strings.Contains(page, `value="0 3 * * * *"`) ||
		!strings.Contains(page, "regenerate the client</textarea>") {
		t.Fatalf("expected a six-field cron refused in words with the form kept, got %d %q:\n%s", code, noticeOf(page), page)
	}
	form.Set("cron", "0 3 * * *")
	code, _, page = s.post("/app/schedules", form)
	if n := noticeOf(page); code != 201 || !strings.HasPrefix(n, "Made nightly client: its next tick is ") ||
		!strings.Contains(page, "<code>0 3 * * *</code> (Europe/Paris)") {
		t.Fatalf("expected the schedule made and listed, got %d %q:\n%s", code, n, page)
	}
	var actions []string
	if err := s.hub.PG().DB().Select(&actions, `SELECT action FROM audit_log WHERE account_id = $1 AND actor_name = 'Bob'
		ORDER BY id`, s.hub.Account.ID); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actions, " "); got != "schedule.created" {
		t.Errorf("expected only the good schedule's creation audited as Bob, got %q", got)
	}
}

// A member changes a schedule on a form filled from it (its sealed prompt too): a bad
// expression is refused in words with the form kept as sent and nothing changed; a
// form without its CSRF token changes nothing; a good one is saved (a blank zone is
// UTC, as on the new-schedule form). Then the member deletes it after the page that
// asks first. Both are audited as the member.
func TestAMemberChangesAndDeletesAScheduleInTheApp(t *testing.T) {
	s := newSite(t, hubtest.WithAgentCommand("agent_1", "cat")) // the hub has agent_1 alone
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	ctx := context.Background()
	in := core.ScheduleInput{Name: new("deps weekly"), ProjectID: &s.hub.Project.ID, Agent: new("agent_1"), Model: new("m"),
		Prompt: new("update the <deps>"), Cron: new("0 9 * * 1"), TimeZone: new("Europe/Paris")}
	sc, err := s.hub.Service.Schedules.CreateSchedule(ctx, s.hub.Account, in)
	if err != nil {
		t.Fatal(err)
	}
	s.signIn("bob-1")
	within := "?project=" + s.hub.Project.ID
	_, _, page := s.get("/app/schedules" + within)
	edit, remove := "/app/schedules/"+sc.ID+"/edit", "/app/schedules/"+sc.ID+"/delete"
	if !strings.Contains(page, `href="`+edit+within+`"`) || !strings.Contains(page, `href="`+remove+within+`"`) {
		t.Fatalf("expected each schedule to link its change form and its delete:\n%s", page)
	}
	code, _, page := s.get(edit + within)
	for _, want := range []string{`action="` + edit + `"`, `value="deps weekly"`, `value="0 9 * * 1"`, `value="Europe/Paris"`,
		`value="m"`, "update the &lt;deps&gt;</textarea>", `value="` + s.hub.Project.ID + `" selected`, `value="agent_1" selected`,
		`value="new" selected`, `name="within" value="` + s.hub.Project.ID + `"`} {
		if code != 200 || !strings.Contains(page, want) {
			t.Fatalf("expected the change form filled from the schedule (%s), got %d:\n%s", want, code, page)
		}
	}
	// A schedule whose agent this hub does not have is offered its own, not changed
	// silently to the first agent there is.
	in.Agent = new("agent_4")
	other, err := s.hub.Service.Schedules.CreateSchedule(ctx, s.hub.Account, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, page := s.get("/app/schedules/" + other.ID + "/edit"); !strings.Contains(page, `value="agent_4" selected`) {
		t.Errorf("expected the change form to keep an agent the hub lacks:\n%s", page)
	}
	form := url.Values{"csrf": {csrfOf(t, page)}, "within": {s.hub.Project.ID}, "name": {"deps daily"}, "project": {s.hub.Project.ID},
		"agent": {"agent_1"}, "model": {"m2"}, "prompt": {"update and test"}, "cron": {"30 7 * * 1-5 *"}, "timeZone": {""},
		"mode": {"standing"}}
	code, _, page = s.post(edit, form)
	if code != 400 || !strings.Contains(noticeOf(page), "cron") || !strings.Contains(page, `value="30 7 * * 1-5 *"`) ||
		!strings.Contains(page, "update and test</textarea>") || !strings.Contains(page, `value="standing" selected`) {
		t.Fatalf("expected a six-field cron refused in words with the form kept, got %d %q:\n%s", code, noticeOf(page), page)
	}
	form.Set("cron", "30 7 * * 1-5")
	if code, _, _ := s.post(edit, url.Values{"csrf": {"forged"}, "cron": {"0 0 * * *"}, "name": {"forged"}}); code != 403 {
		t.Errorf("expected a form without its token refused, got %d", code)
	}
	if got, _ := s.hub.Service.Schedules.GetSchedule(ctx, s.hub.Account, sc.ID); got.Name != "deps weekly" || got.Cron != "0 9 * * 1" ||
		got.Prompt != "update the <deps>" || got.Model != "m" {
		t.Fatalf("expected the refused forms to change nothing, got %+v", got)
	}
	code, _, page = s.post(edit, form)
	if n := noticeOf(page); code != 200 || !strings.HasPrefix(n, "Saved deps daily: its next tick is ") ||
		!strings.Contains(page, "<code>30 7 * * 1-5</code> (UTC)") {
		t.Fatalf("expected the change saved and listed, got %d %q:\n%s", code, n, page)
	}
	got, err := s.hub.Service.Schedules.GetSchedule(ctx, s.hub.Account, sc.ID)
	if err != nil || got.Prompt != "update and test" || got.Model != "m2" || got.TimeZone != "UTC" || got.Mode != core.ScheduleModeStanding {
		t.Errorf("expected every field changed, got %+v (%v)", got, err)
	}

	code, _, page = s.get(remove + within)
	if code != 200 || !strings.Contains(page, "Delete the schedule deps daily?") || !strings.Contains(page, `action="`+remove+within+`"`) ||
		!strings.Contains(page, `href="/app/schedules`+within+`"`) {
		t.Fatalf("expected the page that asks before a delete, got %d:\n%s", code, page)
	}
	code, _, page = s.post(remove+within, url.Values{"csrf": {form.Get("csrf")}})
	if n := noticeOf(page); code != 200 || !strings.HasPrefix(n, "Deleted deps daily") || strings.Contains(page, "deps daily</td>") {
		t.Fatalf("expected the schedule deleted and the project's page shown, got %d %q:\n%s", code, n, page)
	}
	if _, err := s.hub.Service.Schedules.GetSchedule(ctx, s.hub.Account, sc.ID); core.ErrorCode(err) != core.CodeScheduleNotFound {
		t.Errorf("expected the schedule gone, got %v", err)
	}
	for _, path := range []string{edit, remove} {
		if code, _, _ := s.get(path); code != 404 {
			t.Errorf("expected %s of a deleted schedule to be 404, got %d", path, code)
		}
	}
	if got := auditedAs(t, s, "Bob", sc.ID); got != "schedule.updated schedule.deleted" {
		t.Errorf("expected Bob's change and delete audited, got %q", got)
	}
}

// auditedAs lists the account's audited actions on target by the person named name,
// oldest first.
func auditedAs(t *testing.T, s *site, name, target string) string {
	t.Helper()
	var actions []string
	if err := s.hub.PG().DB().Select(&actions, `SELECT action FROM audit_log WHERE account_id = $1 AND actor_name = $2
		AND target = $3 ORDER BY id`, s.hub.Account.ID, name, target); err != nil {
		t.Fatal(err)
	}
	return strings.Join(actions, " ")
}
