package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// schedules: each case's schedules are deleted when it ends, as the runner's pass
// takes every due schedule of the database.
var schedules = []coretest.Case{
	{Name: "a create with a bad field is refused with the field's code", Test: scheduleValidation},
	{Name: "a due tick starts a workspace that names the schedule as origin and author", Test: scheduleTickStarts},
	{Name: "a tick missed less than a period ago runs, older ones are skipped late", Test: scheduleMissedTicks},
	{Name: "a run refused by the workspace quota is recorded with its code and reason", Test: scheduleQuotaRefused},
	{Name: "a standing schedule's runs queue in order in one workspace", Test: scheduleStanding},
	{Name: "pause stops the ticks, resume skips those that came meanwhile, run now runs paused", Test: schedulePauseResume},
	{Name: "the run log keeps the last 50 runs", Test: scheduleRunLogBounded},
	{Name: "a channel makes a schedule on its project with its binding's agent, lists and runs it", Test: scheduleFromChat},
	{Name: "a channel with a project runs, pauses, resumes and deletes only that project's schedules, audited as the channel's", Test: scheduleDeletedFromChat},
	{Name: "an account holds at most the hub's number of schedules; one more is quota_exceeded", Test: scheduleQuota},
}

func str(s string) *string { return &s }

// scheduleOf makes a schedule of acct's project; it is deleted when the case ends.
func scheduleOf(t *testing.T, c *coretest.Core, acct *core.Account, projectID, cron, mode string) *core.Schedule {
	t.Helper()
	in := core.ScheduleInput{Name: str("nightly chores"), ProjectID: str(projectID), Agent: str("agent_1"), Model: str("test-model"),
		Prompt: str("update the dependencies"), Cron: str(cron)}
	if mode != "" {
		in.Mode = &mode
	}
	sc, err := c.Schedules.CreateSchedule(context.Background(), acct, in)
	if err != nil {
		t.Fatalf("create schedule: %v", err)
	}
	t.Cleanup(func() { _ = c.Schedules.DeleteSchedule(context.Background(), acct, sc.ID) })
	return sc
}

// runDue advances the clock to at and runs a pass.
func runDue(t *testing.T, c *coretest.Core, at time.Time) {
	t.Helper()
	if d := at.Sub(c.Clock.Now()); d > 0 {
		c.Clock.Advance(d)
	}
	if _, err := c.ScheduleRuns.RunDueSchedules(context.Background()); err != nil {
		t.Fatalf("run due schedules: %v", err)
	}
}

// runsOf reads the schedule's run log as "outcome@tick" lines, newest first.
func runsOf(t *testing.T, c *coretest.Core, acct *core.Account, sc *core.Schedule) []*core.ScheduleRun {
	t.Helper()
	runs, err := c.Schedules.ListScheduleRuns(context.Background(), acct, sc.ID)
	if err != nil {
		t.Fatalf("list runs: %v", err)
	}
	return runs
}

func outcomes(runs []*core.ScheduleRun, zero time.Time) string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Outcome+"@"+r.Tick.Sub(zero).String())
	}
	return strings.Join(out, " ")
}

func scheduleValidation(t *testing.T, c *coretest.Core) {
	ctx := context.Background()
	valid := func() core.ScheduleInput {
		return core.ScheduleInput{Name: str("n"), ProjectID: str(c.Project.ID), Agent: str("agent_1"), Model: str("m"),
			Prompt: str("p"), Cron: str("0 9 * * 1")}
	}
	for _, tc := range []struct {
		name, code, detail string
		edit               func(*core.ScheduleInput)
	}{
		{"bad cron", core.CodeInvalidRequest, "is not a cron expression", func(in *core.ScheduleInput) { in.Cron = str("61 * * * *") }},
		{"cron with a zone", core.CodeInvalidRequest, "set timeZone", func(in *core.ScheduleInput) { in.Cron = str("CRON_TZ=UTC 0 9 * * *") }},
		{"@every", core.CodeInvalidRequest, "@every", func(in *core.ScheduleInput) { in.Cron = str("@every 1h") }},
		{"unknown zone", core.CodeInvalidRequest, "not an IANA time zone", func(in *core.ScheduleInput) { in.TimeZone = str("Mars/Olympus") }},
		{"unknown project", core.CodeProjectNotFound, "", func(in *core.ScheduleInput) { in.ProjectID = str("prj_0000000000000000") }},
		{"empty prompt", core.CodeInvalidPrompt, "", func(in *core.ScheduleInput) { in.Prompt = str(" \x00 ") }},
		{"long prompt", core.CodeInvalidPrompt, "", func(in *core.ScheduleInput) { in.Prompt = str(strings.Repeat("x", core.MaxTextChars+1)) }},
		{"unknown agent", core.CodeInvalidRequest, "agent", func(in *core.ScheduleInput) { in.Agent = str("agent_9") }},
		{"unknown mode", core.CodeInvalidRequest, "mode", func(in *core.ScheduleInput) { in.Mode = str("sometimes") }},
		{"no name", core.CodeInvalidRequest, "name is required", func(in *core.ScheduleInput) { in.Name = nil }},
	} {
		in := valid()
		tc.edit(&in)
		_, err := c.Schedules.CreateSchedule(ctx, c.Account, in)
		if core.ErrorCode(err) != tc.code || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%s: expected %s mentioning %q, got %v", tc.name, tc.code, tc.detail, err)
		}
	}
	in := valid()
	in.TimeZone = str("Europe/Paris")
	sc, err := c.Schedules.CreateSchedule(ctx, c.Account, in)
	if err != nil {
		t.Fatalf("valid schedule: %v", err)
	}
	defer func() { _ = c.Schedules.DeleteSchedule(ctx, c.Account, sc.ID) }()
	if tick := sc.NextTickAt.In(mustZone(t, "Europe/Paris")); tick.Hour() != 9 || tick.Weekday() != time.Monday {
		t.Errorf("expected the next tick on a Monday at 09:00 in Paris, got %s", tick)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func scheduleTickStarts(t *testing.T, c *coretest.Core) {
	sc := scheduleOf(t, c, c.Account, c.Project.ID, "*/5 * * * *", "")
	runDue(t, c, sc.NextTickAt.Add(-time.Second))
	if runs := runsOf(t, c, c.Account, sc); len(runs) != 0 {
		t.Fatalf("expected no run before the tick, got %s", outcomes(runs, sc.NextTickAt))
	}
	runDue(t, c, sc.NextTickAt)
	runs := runsOf(t, c, c.Account, sc)
	if len(runs) != 1 || runs[0].Outcome != core.RunStarted || !runs[0].Tick.Equal(sc.NextTickAt) {
		t.Fatalf("expected one run started at the tick, got %s", outcomes(runs, sc.NextTickAt))
	}
	ws := c.Workspace(c.Account, runs[0].WorkspaceID)
	if ws.Origin != core.OriginSchedule || ws.StartedBy == nil || ws.StartedBy.Kind != core.AuthorSchedule ||
		ws.StartedBy.ID != sc.ID || ws.StartedBy.Name != sc.Name {
		t.Errorf("expected the workspace to name schedule %s (%q) as origin and author, got %s %+v", sc.ID, sc.Name, ws.Origin, ws.StartedBy)
	}
	msgs := c.Messages(c.Account, ws.ID)
	if len(msgs) != 1 || msgs[0].Text != "update the dependencies" || msgs[0].Author == nil || msgs[0].Author.Kind != core.AuthorSchedule {
		t.Errorf("expected the prompt as the first message, by the schedule, got %+v", msgs)
	}
	runDue(t, c, sc.NextTickAt.Add(time.Minute)) // the same tick again: nothing
	if again := runsOf(t, c, c.Account, sc); len(again) != 1 {
		t.Errorf("expected the tick run once, got %s", outcomes(again, sc.NextTickAt))
	}
	c.Settle() // the run's turn
	events := deliveredFor(t, c, ws.ID)
	if len(events) != 1 || events[0].Origin != core.OriginSchedule || events[0].StartedBy == nil ||
		events[0].StartedBy.Kind != core.AuthorSchedule || events[0].StartedBy.ID != sc.ID || events[0].StartedBy.Name != sc.Name {
		t.Errorf("expected workspace.turn.completed to name the schedule, got %+v", events)
	}
}

func scheduleMissedTicks(t *testing.T, c *coretest.Core) {
	sc := scheduleOf(t, c, c.Account, c.Project.ID, "0 * * * *", "")
	t0 := sc.NextTickAt
	// No hub ran for a while: the ticks at t0 and t0+1h are a period or more late, the
	// one at t0+2h ten minutes late.
	runDue(t, c, t0.Add(2*time.Hour+10*time.Minute))
	runs := runsOf(t, c, c.Account, sc)
	if got, want := outcomes(runs, t0), "started@2h0m0s skipped_late@1h0m0s skipped_late@0s"; got != want {
		t.Fatalf("expected %q, got %q", want, got)
	}
	if !strings.Contains(runs[1].Reason, "1h10m0s late") || !strings.Contains(runs[1].Reason, "period of 1h0m0s") {
		t.Errorf("expected the skip to say how late and the period, got %q", runs[1].Reason)
	}
	runDue(t, c, t0.Add(3*time.Hour+59*time.Minute)) // t0+3h: 59 minutes late, inside its window
	if got, want := outcomes(runsOf(t, c, c.Account, sc)[:1], t0), "started@3h0m0s"; got != want {
		t.Errorf("expected %q, got %q", want, got)
	}
}

func scheduleQuotaRefused(t *testing.T, c *coretest.Core) {
	acct := tenant(c)
	c.SetQuotas(acct.ID, core.AccountUpdate{MaxWorkspaces: ptr(1)})
	projects, err := c.Workspaces.ListProjects(context.Background(), acct)
	if err != nil || len(projects) != 1 {
		t.Fatalf("list projects: %v %v", projects, err)
	}
	c.Create(acct, "")
	sc := scheduleOf(t, c, acct, projects[0].ID, "*/5 * * * *", "")
	runDue(t, c, sc.NextTickAt)
	runs := runsOf(t, c, acct, sc)
	if len(runs) != 1 || runs[0].Outcome != core.RunRefused || runs[0].Code != core.CodeQuotaExceeded ||
		!strings.Contains(runs[0].Reason, "1 live workspaces") || runs[0].WorkspaceID != "" {
		t.Fatalf("expected the run refused for the workspace quota, got %+v", runs)
	}
	runDue(t, c, sc.NextTickAt.Add(time.Minute))
	if again := runsOf(t, c, acct, sc); len(again) != 1 {
		t.Errorf("expected the refused tick used once, got %s", outcomes(again, sc.NextTickAt))
	}
}

func scheduleStanding(t *testing.T, c *coretest.Core) {
	sc := scheduleOf(t, c, c.Account, c.Project.ID, "*/5 * * * *", core.ScheduleModeStanding)
	for i := range 3 {
		runDue(t, c, sc.NextTickAt.Add(time.Duration(i)*5*time.Minute))
	}
	runs := runsOf(t, c, c.Account, sc)
	if got, want := outcomes(runs, sc.NextTickAt), "sent@10m0s sent@5m0s started@0s"; got != want {
		t.Fatalf("expected %q, got %q", want, got)
	}
	for _, r := range runs {
		if r.WorkspaceID != runs[2].WorkspaceID {
			t.Fatalf("expected every run in workspace %s, got %s", runs[2].WorkspaceID, r.WorkspaceID)
		}
	}
	msgs := c.Messages(c.Account, runs[0].WorkspaceID)
	if len(msgs) != 3 {
		t.Fatalf("expected three queued prompts, got %d", len(msgs))
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || m.Status != core.MessagePending || m.Text != "update the dependencies" {
			t.Errorf("message %d: expected seq %d pending with the prompt, got seq %d %s %q", i, i+1, m.Seq, m.Status, m.Text)
		}
	}
}

func schedulePauseResume(t *testing.T, c *coretest.Core) {
	ctx := context.Background()
	sc := scheduleOf(t, c, c.Account, c.Project.ID, "0 * * * *", "")
	if _, err := c.Schedules.PauseSchedule(ctx, c.Account, sc.ID); err != nil {
		t.Fatal(err)
	}
	runDue(t, c, sc.NextTickAt.Add(90*time.Minute))
	if runs := runsOf(t, c, c.Account, sc); len(runs) != 0 {
		t.Fatalf("expected no run while paused, got %s", outcomes(runs, sc.NextTickAt))
	}
	run, err := c.Schedules.RunScheduleNow(ctx, c.Account, sc.ID)
	if err != nil || run.Outcome != core.RunStarted {
		t.Fatalf("expected run now to start a workspace while paused, got %+v %v", run, err)
	}
	resumed, err := c.Schedules.ResumeSchedule(ctx, c.Account, sc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := sc.NextTickAt.Add(2 * time.Hour); !resumed.NextTickAt.Equal(want) {
		t.Errorf("expected the next tick after resuming at %s, got %s", want, resumed.NextTickAt)
	}
	runDue(t, c, c.Clock.Now())
	if runs := runsOf(t, c, c.Account, sc); len(runs) != 1 {
		t.Errorf("expected the ticks that came while paused not run, got %s", outcomes(runs, sc.NextTickAt))
	}
}

func scheduleRunLogBounded(t *testing.T, c *coretest.Core) {
	acct := tenant(c)
	c.SetQuotas(acct.ID, core.AccountUpdate{MaxWorkspaces: ptr(1)})
	c.Create(acct, "") // every run refused: cheap
	projects, _ := c.Workspaces.ListProjects(context.Background(), acct)
	sc := scheduleOf(t, c, acct, projects[0].ID, "* * * * *", "")
	for i := range core.MaxScheduleRuns + 3 {
		runDue(t, c, sc.NextTickAt.Add(time.Duration(i)*time.Minute))
	}
	runs := runsOf(t, c, acct, sc)
	if len(runs) != core.MaxScheduleRuns || !runs[0].Tick.Equal(sc.NextTickAt.Add(52*time.Minute)) {
		t.Errorf("expected the newest %d runs, newest first, got %d from %s", core.MaxScheduleRuns, len(runs), runs[0].Tick)
	}
}

func scheduleFromChat(t *testing.T, c *coretest.Core) {
	ctx := context.Background()
	sess := &core.ChatSession{Place: core.ChatPlace{Platform: core.PlatformSlack, TeamID: "T1", ChannelID: "C1"},
		Binding: &core.ChatBinding{Agent: "agent_2", Model: "gpt-x"}, Account: c.Account, ChannelProject: c.Project.ID}
	if _, err := c.Chat.ScheduleFromChat(ctx, sess, "61 * * * *", "", "x"); core.ErrorCode(err) != core.CodeInvalidRequest {
		t.Errorf("expected a bad expression refused, got %v", err)
	}
	sc, err := c.Chat.ScheduleFromChat(ctx, sess, "0 7 * * *", "Asia/Tokyo", "Triage the new issues\nLabel them.")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Schedules.DeleteSchedule(ctx, c.Account, sc.ID) })
	if sc.Name != "Triage the new issues" || sc.Agent != "agent_2" || sc.Model != "gpt-x" || sc.ProjectID != c.Project.ID ||
		sc.TimeZone != "Asia/Tokyo" || sc.Prompt != "Triage the new issues\nLabel them." {
		t.Errorf("expected the schedule named by the prompt's first line with the binding's agent and model, got %+v", sc)
	}
	list, err := c.Chat.ChatSchedules(ctx, sess)
	if err != nil || len(list) != 1 || list[0].ID != sc.ID {
		t.Fatalf("expected the channel's project's one schedule, got %v (%v)", list, err)
	}
	_, run, err := c.Chat.ChatScheduleAction(ctx, sess, sc.ID, core.ScheduleActionRun)
	if err != nil || run.Outcome != core.RunStarted || c.Workspace(c.Account, run.WorkspaceID).Agent != "agent_2" {
		t.Fatalf("expected the run to start an agent_2 workspace, got %+v %v", run, err)
	}
	paused, _, err := c.Chat.ChatScheduleAction(ctx, sess, sc.ID, core.ScheduleActionPause)
	if err != nil || !paused.Paused {
		t.Errorf("expected it paused, got %+v %v", paused, err)
	}
	if got, want := auditOf(t, c, c.Account.ID, sc.ID, "slack:C1"), "schedule.created schedule.run_now schedule.paused"; got != want {
		t.Errorf("expected the channel's changes audited as %q, got %q", want, got)
	}
}

func scheduleDeletedFromChat(t *testing.T, c *coretest.Core) {
	ctx := context.Background()
	sc := scheduleOf(t, c, c.Account, c.Project.ID, "0 9 * * 1", "")
	place := core.ChatPlace{Platform: core.PlatformDiscord, TeamID: "G1", ChannelID: "C2"}
	elsewhere := &core.ChatSession{Place: place, Binding: &core.ChatBinding{}, Account: c.Account, ChannelProject: "prj_0000000000000000"}
	for _, action := range []string{core.ScheduleActionRun, core.ScheduleActionPause, core.ScheduleActionResume, core.ScheduleActionDelete} {
		if _, _, err := c.Chat.ChatScheduleAction(ctx, elsewhere, sc.ID, action); core.ErrorCode(err) != core.CodeScheduleNotFound {
			t.Fatalf("%s: expected another project's channel told there is no such schedule, got %v", action, err)
		}
	}
	if got, _ := c.Schedules.GetSchedule(ctx, c.Account, sc.ID); got == nil || got.Paused {
		t.Fatalf("expected the schedule untouched by another project's channel, got %+v", got)
	}
	here := &core.ChatSession{Place: place, Binding: &core.ChatBinding{}, Account: c.Account, ChannelProject: c.Project.ID}
	gone, _, err := c.Chat.ChatScheduleAction(ctx, here, sc.ID, core.ScheduleActionDelete)
	if err != nil || gone.ID != sc.ID || gone.Name != sc.Name {
		t.Fatalf("expected the schedule deleted and answered as it was, got %+v %v", gone, err)
	}
	if _, err := c.Schedules.GetSchedule(ctx, c.Account, sc.ID); core.ErrorCode(err) != core.CodeScheduleNotFound {
		t.Errorf("expected the schedule gone, got %v", err)
	}
	if got := auditOf(t, c, c.Account.ID, sc.ID, "discord:C2"); got != core.AuditScheduleDeleted {
		t.Errorf("expected only the delete audited as the channel's, got %q", got)
	}
}

// auditOf lists the actions actor did to target, oldest first.
func auditOf(t *testing.T, c *coretest.Core, accountID, target, actor string) string {
	t.Helper()
	entries, err := c.Store.ListAudit(context.Background(), accountID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; e.Target == target && e.Actor == actor {
			out = append(out, e.Action)
		}
	}
	return strings.Join(out, " ")
}

func scheduleQuota(t *testing.T, c *coretest.Core) {
	ctx := context.Background()
	acct := tenant(c)
	projects, _ := c.Workspaces.ListProjects(ctx, acct)
	var last *core.Schedule
	for range core.DefaultMaxSchedules {
		last = scheduleOf(t, c, acct, projects[0].ID, "0 9 * * 1", "")
	}
	in := core.ScheduleInput{Name: str("one more"), ProjectID: str(projects[0].ID), Agent: str("agent_1"), Model: str("m"),
		Prompt: str("p"), Cron: str("0 9 * * 1")}
	_, err := c.Schedules.CreateSchedule(ctx, acct, in)
	if core.ErrorCode(err) != core.CodeQuotaExceeded || !strings.Contains(err.Error(), "the account has 50 schedules: the hub's limit is 50") {
		t.Fatalf("expected one schedule more than %d refused as quota_exceeded naming the limit, got %v", core.DefaultMaxSchedules, err)
	}
	if list, _ := c.Schedules.ListSchedules(ctx, acct); len(list) != core.DefaultMaxSchedules {
		t.Errorf("expected nothing of the refused schedule stored, got %d schedules", len(list))
	}
	if err := c.Schedules.DeleteSchedule(ctx, acct, last.ID); err != nil {
		t.Fatal(err)
	}
	sc, err := c.Schedules.CreateSchedule(ctx, acct, in)
	if err != nil {
		t.Fatalf("expected a deleted schedule's place taken again, got %v", err)
	}
	_ = c.Schedules.DeleteSchedule(ctx, acct, sc.ID)
}
