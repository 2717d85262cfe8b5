package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// statusEvery is the hub's least time between two edits of a thread's status in
// these tests (2 s in production).
const statusEvery = 300 * time.Millisecond

func liveHub(t *testing.T, f *fakeSlack) *hubtest.Hub {
	t.Helper()
	h := slackHub(t, f, true, hubtest.WithConfig(func(c *hub.Config) { c.ChatStatusEvery = statusEvery }))
	h.SetProjectNetwork(core.NetworkNone) // a quick turn must end within statusEvery
	return h
}

// blockActions is a block_actions interaction as Slack posts it for a button press
// (https://api.slack.com/reference/interaction-payloads/block-actions), as JSON.
func blockActions(user string, msg post, threadTS, actionID, value string) []byte {
	p, _ := json.Marshal(map[string]any{
		"type": "block_actions", "team": map[string]any{"id": team, "domain": "test"},
		"user": map[string]any{"id": user, "team_id": team, "name": "someone"}, "api_app_id": "A0APP", "token": "unused",
		"container":  map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": channel, "is_ephemeral": false},
		"trigger_id": "1.2.3", "channel": map[string]any{"id": channel, "name": "general"},
		"message":      map[string]any{"type": "message", "ts": msg.TS, "thread_ts": threadTS, "text": msg.Text, "user": botUser},
		"response_url": "https://hooks.slack.com/actions/T0TEAM01/1/x",
		"actions": []map[string]any{{"action_id": actionID, "block_id": "b1", "value": value, "type": "button",
			"action_ts": "1700000000.1"}},
	})
	return p
}

// press posts a signed interaction to /slack/interactivity, form-encoded as Slack
// sends it, and returns the status.
func press(t *testing.T, h *hubtest.Hub, payload []byte, secret string) int {
	t.Helper()
	body := []byte(url.Values{"payload": {string(payload)}}.Encode())
	ts, sig := sign(body, secret, time.Now())
	req, _ := http.NewRequest("POST", h.URL+"/slack/interactivity", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// buttonValue is the value of the button actionID in a message's blocks ("" if none).
func buttonValue(blocks, actionID string) string {
	var bs []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	_ = json.Unmarshal([]byte(blocks), &bs)
	for _, b := range bs {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.Value
			}
		}
	}
	return ""
}

func (f *fakeSlack) Updates(ts string) []post {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []post
	for _, u := range f.updates {
		if u.TS == ts {
			out = append(out, u)
		}
	}
	return out
}

func (f *fakeSlack) waitUpdates(t *testing.T, ts, what string, cond func([]post) bool) []post {
	t.Helper()
	return eventually.Value(t, 30*time.Second, what+" of message "+ts, func() ([]post, error) {
		u := f.Updates(ts)
		if !cond(u) {
			return u, fmt.Errorf("got %+v", u)
		}
		return u, nil
	})
}

// approvalPost waits for a post in thread with Allow and Deny, other than those at not.
func approvalPost(t *testing.T, f *fakeSlack, thread string, not ...string) post {
	t.Helper()
	var found post
	f.waitPosts(t, thread, "an approval", func(ps []post) bool {
		for _, p := range ps {
			if buttonValue(p.Blocks, "wshub_allow") != "" && !slices.Contains(not, p.TS) {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

func hasPrefix(p string) func([]post) bool {
	return func(ps []post) bool { return len(ps) > 0 && strings.HasPrefix(ps[len(ps)-1].Text, p) }
}

// A turn that runs a while gets one status message in its thread: posted with a
// Stop button, edited in place as its steps come (never twice within the interval),
// and ended with how the turn went and no button; the reply follows as before.
func TestTurnStatusIsEditedInPlace(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := liveHub(t, f)
	const root = "1700000100.000100"
	deliver(t, h, eventBody("EvL001", mention(root, "", "<@"+botUser+"> paced 6 0.25")))
	posts := f.waitPosts(t, root, "the status and the reply", func(p []post) bool { return len(p) >= 2 })
	status := posts[0]
	if !strings.HasPrefix(status.Text, ":hourglass_flowing_sand: Working… ") || buttonValue(status.Blocks, "wshub_stop") == "" {
		t.Fatalf("expected a Working… status with a Stop button first, got %+v", status)
	}
	if posts[1].Text != "did 6 paced steps" || len(posts) != 2 {
		t.Fatalf("expected the reply after the status and nothing else, got %+v", posts)
	}
	updates := f.waitUpdates(t, status.TS, "the final edit", hasPrefix(":white_check_mark: Finished in "))
	final := updates[len(updates)-1]
	if !strings.HasSuffix(final.Text, " · 6 steps") || buttonValue(final.Blocks, "wshub_stop") != "" {
		t.Fatalf("expected the final status to count 6 steps with no button, got %+v", final)
	}
	sawSteps := false
	for _, u := range updates[:len(updates)-1] {
		sawSteps = sawSteps || strings.Contains(u.Text, "• bash `step ")
		if !strings.HasPrefix(u.Text, ":hourglass_flowing_sand: Working… ") || buttonValue(u.Blocks, "wshub_stop") == "" {
			t.Fatalf("expected running edits to say Working… with the Stop button, got %+v", u)
		}
	}
	if !sawSteps || len(updates) < 2 {
		t.Fatalf("expected edits showing the steps as they came, got %+v", updates)
	}
	// At most one edit per interval: the fake records each call as it arrives.
	at := append([]time.Time{status.At}, editTimes(f, status.TS)...)
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < statusEvery-50*time.Millisecond {
			t.Fatalf("expected edits at least %s apart, got %s between edits %d and %d", statusEvery, gap, i-1, i)
		}
	}

	// A quick turn gets no status: its reply says it all. Quick means quicker than
	// statusEvery, which a busy machine may not manage: then the turn is not quick,
	// and a status is right.
	deliver(t, h, eventBody("EvL002", mention("1700000101.000100", root, "<@"+botUser+"> quick")))
	f.waitPosts(t, root, "the quick reply", func(p []post) bool {
		return slices.ContainsFunc(p, func(x post) bool { return x.Text == "echo: quick" })
	})
	if took := lastTurnTook(t, h); took >= statusEvery {
		t.Logf("the quick turn took %s on this machine, not under %s: no check that it got no status", took, statusEvery)
		return
	}
	time.Sleep(2 * statusEvery) // sleep: a status comes statusEvery into a turn; this is twice that deadline, and nothing marks a status not posted
	if p := f.waitPosts(t, root, "", func([]post) bool { return true }); len(p) != 3 || p[2].Text != "echo: quick" {
		t.Fatalf("expected only the quick turn's reply, got %+v", p)
	}
}

// lastTurnTook is how long the account's only workspace's last turn ran, from its
// message's delivery to its reply (the hub's clock).
func lastTurnTook(t *testing.T, h *hubtest.Hub) time.Duration {
	t.Helper()
	list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
	id := list[0].(map[string]any)["workspaceId"].(string)
	msgs := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "").Body["messages"].([]any)
	var delivered, replied float64
	for _, raw := range msgs {
		m := raw.(map[string]any)
		if at, ok := m["deliveredAt"].(float64); ok && m["role"] == "user" {
			delivered = at
		}
		if m["role"] == "assistant" {
			replied = m["createdAt"].(float64)
		}
	}
	return time.Duration(replied-delivered) * time.Millisecond
}

// editTimes are when the fake received each edit of ts.
func editTimes(f *fakeSlack, ts string) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.updateTimes[ts]...)
}

// Stop on the status ends the turn interrupted; the status then says so. A second
// press tells the member the turn has ended. A bad signature changes nothing.
func TestStopButtonEndsTheTurn(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := liveHub(t, f)
	const root = "1700000200.000100"
	deliver(t, h, eventBody("EvS001", mention(root, "", "<@"+botUser+"> sleep 30")))
	status := f.waitPosts(t, root, "the status", func(p []post) bool { return len(p) >= 1 })[0]
	turn := buttonValue(status.Blocks, "wshub_stop")
	if !strings.HasPrefix(turn, "turn_") {
		t.Fatalf("expected the Stop button to carry the turn, got %+v", status)
	}
	if code := press(t, h, blockActions("UHUMAN01", status, root, "wshub_stop", turn), "another-secret"); code != 401 {
		t.Fatalf("expected a press with a bad signature refused, got %d", code)
	}
	pressed := time.Now()
	if code := press(t, h, blockActions("UHUMAN01", status, root, "wshub_stop", turn), signingSecret); code != 200 {
		t.Fatalf("expected 200 for the press, got %d", code)
	}
	posts := f.waitPosts(t, root, "the interrupted reply", func(p []post) bool { return len(p) >= 2 })
	if !strings.Contains(posts[1].Text, "interrupted") {
		t.Fatalf("expected the turn interrupted, got %+v", posts[1])
	}
	if took := time.Since(pressed); took > 5*time.Second {
		t.Fatalf("expected the stop within a second or so, took %s", took)
	}
	f.waitUpdates(t, status.TS, "the stopped status", hasPrefix(":black_square_for_stop: Stopped after "))
	press(t, h, blockActions("UHUMAN01", status, root, "wshub_stop", turn), signingSecret)
	f.mu.Lock()
	eph := append([]post(nil), f.ephemerals...)
	f.mu.Unlock()
	if len(eph) != 1 || eph[0].User != "UHUMAN01" || eph[0].Text != "That turn has already ended." || eph[0].ThreadTS != root {
		t.Fatalf("expected the second press told to the member alone, got %+v", eph)
	}
}

// An approval asked in a thread appears with Allow and Deny; a member the binding
// does not let talk here is refused (to them alone) and nothing is decided; Allow
// lets the turn go on and the message then says who allowed it, without buttons; a
// second press changes nothing; a third, allowed in the app, names the member.
func TestApprovalButtons(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := liveHub(t, f)
	const root = "1700000300.000100"
	// The binding starts workspaces in the approval-required mode.
	limit := func(channels []string) {
		if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
			AccountID: h.Account.ID, Agent: "agent_1", Model: "test-model", Channels: channels,
			RuntimeMode: core.ModeApprovalRequired}); err != nil {
			t.Fatal(err)
		}
	}
	limit(nil)
	deliver(t, h, eventBody("EvA002", mention(root, "", "<@"+botUser+"> ask one two three")))
	msg := approvalPost(t, f, root, "")
	approval := buttonValue(msg.Blocks, "wshub_allow")
	if msg.Text != ":lock: The agent asks to run bash:\n```\nrm -rf one\n```\nAllow it?" || buttonValue(msg.Blocks, "wshub_deny") != approval {
		t.Fatalf("expected the question with Allow and Deny, got %+v", msg)
	}

	// The binding now limits workspaces to another channel: the press is refused.
	limit([]string{"C0OTHER1"})
	press(t, h, blockActions("UHUMAN02", msg, root, "wshub_allow", approval), signingSecret)
	f.mu.Lock()
	eph := append([]post(nil), f.ephemerals...)
	f.mu.Unlock()
	if len(eph) != 1 || eph[0].User != "UHUMAN02" || !strings.Contains(eph[0].Text, "limits them to some roles or channels") {
		t.Fatalf("expected the refusal told to the member alone, got %+v", eph)
	}
	if len(f.Updates(msg.TS)) != 0 {
		t.Fatalf("expected the refused press to change nothing, got %+v", f.Updates(msg.TS))
	}
	limit(nil)

	press(t, h, blockActions("UHUMAN01", msg, root, "wshub_allow", approval), signingSecret)
	press(t, h, blockActions("UHUMAN02", msg, root, "wshub_deny", approval), signingSecret)
	updates := f.waitUpdates(t, msg.TS, "two edits", func(u []post) bool { return len(u) >= 2 })
	for _, u := range updates {
		if u.Text != msg.Text+"\n:white_check_mark: Allowed by <@UHUMAN01>" || buttonValue(u.Blocks, "wshub_allow") != "" {
			t.Fatalf("expected the message to say who allowed it, without buttons, got %+v", u)
		}
	}
	ws := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Body["workspaces"].([]any)[0].(map[string]any)
	h.Call("POST", "/v1/api/workspaces/"+ws["workspaceId"].(string)+"/approvals/"+approval, h.Key,
		map[string]any{"decision": "deny"}).Expect(t, 409, "approval_not_pending")
	// The events name who allowed it, by their Slack display name.
	events := h.Call("GET", "/v1/api/workspaces/"+ws["workspaceId"].(string)+"/events?afterSeq=0", h.Key, nil).Expect(t, 200, "")
	var decider map[string]any
	for _, raw := range events.Body["events"].([]any) {
		if e := raw.(map[string]any); e["type"] == "approval_resolved" && e["approvalId"] == approval {
			decider, _ = e["decider"].(map[string]any)
		}
	}
	if decider["kind"] != "slack" || decider["id"] != "UHUMAN01" || decider["name"] != "Ada Lovelace" {
		t.Fatalf("expected the approval_resolved event to name Ada, got %v", decider)
	}

	// The second ask, decided through the API: the thread's message says so too, and
	// loses its buttons.
	second := approvalPost(t, f, root, msg.TS)
	h.Call("POST", "/v1/api/workspaces/"+ws["workspaceId"].(string)+"/approvals/"+buttonValue(second.Blocks, "wshub_deny"), h.Key,
		map[string]any{"decision": "deny"}).Expect(t, 200, "")
	edited := f.waitUpdates(t, second.TS, "the API's decision shown", func(u []post) bool { return len(u) >= 1 })
	if edited[0].Text != second.Text+"\n:x: Denied by the API key test" || buttonValue(edited[0].Blocks, "wshub_deny") != "" {
		t.Fatalf("expected the message to say the API denied it, without buttons, got %+v", edited[0])
	}

	// The third, allowed by a member in the app: the thread names her.
	third := approvalPost(t, f, root, msg.TS, second.TS)
	email, _ := core.NewIdentity(core.IdentityEmail, "ada@example.com")
	if _, err := h.Service.Admin.AddMember(context.Background(), h.Account.ID, email, core.RoleMember, "Ada Lovelace"); err != nil {
		t.Fatal(err)
	}
	sess, _, err := h.Service.App.SignIn(context.Background(), core.SignInInput{Identity: email})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.AppWorkspaces.Decide(context.Background(), sess, ws["workspaceId"].(string),
		buttonValue(third.Blocks, "wshub_allow"), "allow"); err != nil {
		t.Fatal(err)
	}
	edited = f.waitUpdates(t, third.TS, "the app's decision shown", func(u []post) bool { return len(u) >= 1 })
	if edited[0].Text != third.Text+"\n:white_check_mark: Allowed by Ada Lovelace in the app" {
		t.Fatalf("expected the message to name Ada in the app, got %+v", edited[0])
	}
	posts := f.waitPosts(t, root, "the turn's reply", func(p []post) bool {
		return strings.Contains(p[len(p)-1].Text, "approval_resolved")
	})
	if reply := posts[len(posts)-1].Text; !strings.Contains(reply, `"id":"one","decision":"allow"`) ||
		!strings.Contains(reply, `"id":"two","decision":"deny"`) || !strings.Contains(reply, `"id":"three","decision":"allow"`) {
		t.Fatalf("expected the agent allowed, denied, then allowed, got %q", reply)
	}
}

// An approval shows the command whole in its question; one too long for a message
// says how much more there is and comes with the whole input as an uploaded file in
// the thread; Allow lets exactly the shown input run (its hash in the agent's answer).
func TestApprovalQuestionShowsTheWholeCommand(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := liveHub(t, f)
	if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
		AccountID: h.Account.ID, Agent: "agent_1", Model: "test-model", RuntimeMode: core.ModeApprovalRequired}); err != nil {
		t.Fatal(err)
	}
	long := hubtest.HiddenTail + strings.Repeat(" && echo more", 300)
	for i, command := range []string{hubtest.HiddenTail, long} {
		root := fmt.Sprintf("1700000400.00010%d", i)
		deliver(t, h, eventBody(fmt.Sprintf("EvW00%d", i), mention(root, "", "<@"+botUser+"> run "+command)))
		msg := approvalPost(t, f, root, "")
		_, block, _ := strings.Cut(msg.Text, "```\n")
		block, _, _ = strings.Cut(block, "\n```")
		block = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(block)
		if command == hubtest.HiddenTail {
			if block != hubtest.HiddenTail || strings.Contains(msg.Text, "attached file") {
				t.Fatalf("expected the whole command, tail and all, in the question, got %q", msg.Text)
			}
		} else {
			more := len(long) - len(block)
			if !strings.HasPrefix(long, block) || !strings.Contains(msg.Text, fmt.Sprintf("%d more characters: see the attached file", more)) {
				t.Fatalf("expected the question to say %d more characters are in the file, got %q", more, msg.Text)
			}
			var ups []upload
			f.waitPosts(t, root, "the whole input uploaded", func([]post) bool { ups = f.Uploads(); return len(ups) == 1 })
			var in map[string]string
			if u := ups[0]; u.Channel != channel || u.ThreadTS != root || json.Unmarshal(u.Data, &in) != nil || in["command"] != long {
				t.Fatalf("expected the whole input uploaded in the thread, got %+v", u)
			}
		}
		press(t, h, blockActions("UHUMAN01", msg, root, "wshub_allow", buttonValue(msg.Blocks, "wshub_allow")), signingSecret)
		want := `"decision":"allow","sha256":"` + hubtest.CommandHash(command) + `"`
		f.waitPosts(t, root, "the agent told to run exactly that input", func(p []post) bool {
			return strings.Contains(p[len(p)-1].Text, want)
		})
	}
}

// A project's setup that takes a while shows in the thread that started the
// workspace: a status with the setup's newest line, edited in place, ending done; no
// Stop button (the workspace is stopped as a whole). The turn comes after it.
func TestSetupShowsItsProgressInTheThread(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := liveHub(t, f)
	if _, err := h.Service.Admin.UpdateProject(context.Background(), core.UpdateProjectInput{ProjectID: h.Project.ID,
		Environment: []byte(`{"setup": "echo resolving packages\nsleep 1\necho linking packages\nsleep 1"}`)}); err != nil {
		t.Fatal(err)
	}
	const root = "1700000900.000100"
	deliver(t, h, eventBody("EvS001", mention(root, "", "<@"+botUser+"> quick")))
	posts := f.waitPosts(t, root, "the setup's status and the reply", func(p []post) bool {
		return slices.ContainsFunc(p, func(x post) bool { return x.Text == "echo: quick" })
	})
	status := posts[0]
	if !strings.HasPrefix(status.Text, ":hourglass_flowing_sand: Setting up the environment… ") || buttonValue(status.Blocks, "wshub_stop") != "" {
		t.Fatalf("expected the setup's status first, without a Stop button, got %+v", posts)
	}
	updates := f.waitUpdates(t, status.TS, "the setup's final edit", hasPrefix(":white_check_mark: Setting up the environment: done in "))
	saw := strings.Contains(status.Text, "packages`")
	for _, u := range updates {
		saw = saw || strings.Contains(u.Text, "\n`linking packages`") || strings.Contains(u.Text, "\n`resolving packages`")
	}
	if !saw {
		t.Errorf("the status should show the setup's newest line: %+v %+v", status, updates)
	}
}
