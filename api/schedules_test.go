package api_test

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// Schedules through the API: made, read, changed, paused, run now and their runs
// listed, with the documented refusals; every answer is checked against openapi.yaml
// by hubtest. A key without workspaces:write may read them but not make one. Each
// change is audited as the key's.
func TestSchedulesThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	body := func(edit func(map[string]any)) map[string]any {
		b := map[string]any{"name": "weekly deps", "projectId": h.Project.ID, "agent": "agent_1", "model": "m",
			"prompt": "update the dependencies", "cron": "0 9 * * 1", "timeZone": "Europe/Paris"}
		if edit != nil {
			edit(b)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		edit   func(map[string]any)
		status int
		code   string
	}{
		{"bad cron", func(b map[string]any) { b["cron"] = "every monday" }, 400, core.CodeInvalidRequest},
		{"unknown zone", func(b map[string]any) { b["timeZone"] = "Europe/Atlantis" }, 400, core.CodeInvalidRequest},
		{"unknown project", func(b map[string]any) { b["projectId"] = "prj_0000000000000000" }, 404, core.CodeProjectNotFound},
		{"prompt over the messages' limit", func(b map[string]any) { b["prompt"] = strings.Repeat("a", core.MaxTextChars+1) }, 400, core.CodeInvalidPrompt},
		{"no prompt", func(b map[string]any) { delete(b, "prompt") }, 400, core.CodeInvalidRequest},
		{"cron not a string", func(b map[string]any) { b["cron"] = 5 }, 400, core.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Call("POST", "/v1/api/schedules", h.Key, body(tc.edit)).Expect(t, tc.status, tc.code)
		})
	}
	h.Call("POST", "/v1/api/schedules", h.Key, []byte("{")).Expect(t, 400, core.CodeInvalidJSON)

	created := h.Call("POST", "/v1/api/schedules", h.Key, body(nil)).Expect(t, 201, "")
	sc := created.Body["schedule"].(map[string]any)
	id := sc["scheduleId"].(string)
	if sc["mode"] != "new" || sc["paused"] != false || sc["timeZone"] != "Europe/Paris" {
		t.Errorf("expected a new-mode schedule, not paused, in Paris, got %s", created.Raw)
	}
	path := "/v1/api/schedules/" + id
	if got := h.Call("GET", "/v1/api/schedules", h.Key, nil).Expect(t, 200, ""); len(got.Body["schedules"].([]any)) != 1 {
		t.Errorf("expected the schedule listed, got %s", got.Raw)
	}
	changed := h.Call("PATCH", path, h.Key, map[string]any{"mode": "standing", "name": "deps"}).Expect(t, 200, "")
	if s := changed.Body["schedule"].(map[string]any); s["mode"] != "standing" || s["name"] != "deps" || s["cron"] != "0 9 * * 1" {
		t.Errorf("expected mode and name changed and the rest kept, got %s", changed.Raw)
	}
	h.Call("PATCH", path, h.Key, map[string]any{"cron": "61 * * * *"}).Expect(t, 400, core.CodeInvalidRequest)
	if p := h.Call("POST", path+"/pause", h.Key, nil).Expect(t, 200, ""); p.Body["schedule"].(map[string]any)["paused"] != true {
		t.Errorf("expected it paused, got %s", p.Raw)
	}
	run := h.Call("POST", path+"/run", h.Key, nil).Expect(t, 200, "")
	r := run.Body["run"].(map[string]any)
	if r["outcome"] != core.RunStarted || !strings.HasPrefix(r["workspaceId"].(string), core.PrefixWorkspace) {
		t.Fatalf("expected run now to start a workspace, got %s", run.Raw)
	}
	ws := h.Call("GET", "/v1/api/workspaces/"+r["workspaceId"].(string), h.Key, nil).Expect(t, 200, "")
	by, _ := ws.Body["workspace"].(map[string]any)["startedBy"].(map[string]any)
	if o := ws.Body["workspace"].(map[string]any)["origin"]; o != core.OriginSchedule || by["kind"] != core.AuthorSchedule || by["id"] != id || by["name"] != "deps" {
		t.Errorf("expected the workspace started by schedule %s, got %s", id, ws.Raw)
	}
	if runs := h.Call("GET", path+"/runs", h.Key, nil).Expect(t, 200, ""); len(runs.Body["runs"].([]any)) != 1 {
		t.Errorf("expected the one run in the log, got %s", runs.Raw)
	}
	h.Call("POST", path+"/resume", h.Key, nil).Expect(t, 200, "")

	// Scopes: reading needs workspaces:read, every change workspaces:write.
	_, reader := scopedKey(t, h, core.NewKeyInput{Name: "reader", Scopes: "workspaces:read"})
	h.Call("GET", path, reader, nil).Expect(t, 200, "")
	h.Call("POST", "/v1/api/schedules", reader, body(nil)).Expect(t, 403, core.CodeKeyScopeRequired)
	h.Call("POST", path+"/run", reader, nil).Expect(t, 403, core.CodeKeyScopeRequired)
	// Another project's key does not see it.
	other := h.NewProject(h.Account.ID, hubtest.GitRepo(t))
	_, elsewhere := scopedKey(t, h, core.NewKeyInput{Name: "elsewhere", Projects: other.ID})
	h.Call("GET", path, elsewhere, nil).Expect(t, 404, core.CodeScheduleNotFound)

	h.Call("DELETE", path, h.Key, nil).Expect(t, 200, "")
	h.Call("GET", path, h.Key, nil).Expect(t, 404, core.CodeScheduleNotFound)
	h.Call("POST", "/v1/api/schedules/nonsense/run", h.Key, nil).Expect(t, 404, core.CodeScheduleNotFound)

	// Every change the key made is in the audit log, as the key's; the refused ones
	// (a bad expression, a key without the scope) are not.
	var actions []string
	if err := h.PG().DB().Select(&actions, `SELECT action FROM audit_log WHERE account_id = $1 AND target = $2
		AND actor LIKE 'api:key_%' ORDER BY id`, h.Account.ID, id); err != nil {
		t.Fatal(err)
	}
	want := "schedule.created schedule.updated schedule.paused schedule.run_now schedule.resumed schedule.deleted"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("expected the key's changes audited as %q, got %q", want, got)
	}
}
