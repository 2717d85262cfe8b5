package web_test

import (
	"context"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
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
	var actions []string
	if err := s.hub.PG().DB().Select(&actions, `SELECT action FROM audit_log WHERE account_id = $1 AND actor_name = 'Bob'
		AND target = $2 ORDER BY id`, s.hub.Account.ID, sc.ID); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(actions, " "); got != "schedule.run_now schedule.paused schedule.resumed" {
		t.Errorf("expected Bob's run, pause and resume audited, got %q", got)
	}
}
