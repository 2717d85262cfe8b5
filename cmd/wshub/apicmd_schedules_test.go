package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

func TestSchedulesCommands(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	env := testEnviron("WSHUB_URL="+h.URL, "WSHUB_API_KEY="+h.Key)
	run := func(want int, in string, args ...string) string {
		t.Helper()
		code, out, errs := wshubAPI(t, env, in, args...)
		expectExit(t, want, code, out, errs, args...)
		return out
	}
	out := run(0, "Update the dependencies\n", "schedules", "create", "--name", "weekly deps", "--project", h.Project.ID,
		"--agent", "agent_1", "--model", "m", "--prompt", "-", "--cron", "0 9 * * 1", "--zone", "Europe/Paris", "--json")
	var created struct {
		Schedule struct {
			ScheduleID, Prompt, TimeZone string
		} `json:"schedule"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Schedule.Prompt != "Update the dependencies" ||
		created.Schedule.TimeZone != "Europe/Paris" {
		t.Fatalf("expected the schedule as JSON with the prompt from stdin, got %q (%v)", out, err)
	}
	id := created.Schedule.ScheduleID
	if out := run(0, "", "schedules", "list"); !strings.HasPrefix(out, "SCHEDULE") || !strings.Contains(out, id) ||
		!strings.Contains(out, "0 9 * * 1") {
		t.Fatalf("expected a table with the schedule, got %q", out)
	}
	if out := run(0, "", "schedules", "pause", id); !strings.Contains(out, "paused") {
		t.Fatalf("expected it paused, got %q", out)
	}
	if out := run(0, "", "schedules", "run", id); !strings.Contains(out, "started") || !strings.Contains(out, "ws_") {
		t.Fatalf("expected a run started in a workspace, got %q", out)
	}
	if out := run(0, "", "schedules", "runs", id); strings.Count(out, "started") != 1 {
		t.Fatalf("expected one run in the log, got %q", out)
	}
	if out := run(0, "", "schedules", "resume", id); !strings.Contains(out, "active") {
		t.Fatalf("expected it active, got %q", out)
	}
	run(4, "", "schedules", "create", "--name", "n", "--project", h.Project.ID, "--agent", "agent_1", "--model", "m",
		"--prompt", "p", "--cron", "0 9 * *")
	run(0, "", "schedules", "delete", id)
	run(4, "", "schedules", "get", id)
}
