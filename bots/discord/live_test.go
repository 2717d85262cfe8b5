package discord_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// statusEvery is the hub's least time between two edits of a thread's status in
// these tests (2 s in production).
const statusEvery = 300 * time.Millisecond

func liveHub(t *testing.T, f *fakeDiscord, bind *core.ChatBinding) *hubtest.Hub {
	t.Helper()
	h := discordHub(t, f, bind, hubtest.WithConfig(func(c *hub.Config) { c.ChatStatusEvery = statusEvery }))
	h.SetProjectNetwork(core.NetworkNone) // a quick turn must end within statusEvery
	return h
}

// customIDs are the custom_ids of a message's buttons.
func customIDs(components string) []string {
	var rows []struct {
		Components []struct {
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	_ = json.Unmarshal([]byte(components), &rows)
	var out []string
	for _, r := range rows {
		for _, c := range r.Components {
			out = append(out, c.CustomID)
		}
	}
	return out
}

// buttonPress is a MESSAGE_COMPONENT interaction as Discord sends it for a button
// (https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object).
func buttonPress(id, channelID string, msg post, customID string, roles ...string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "application_id": appID, "type": 3, "token": "tok-" + id, "guild_id": guildID, "channel_id": channelID,
		"version": 1, "member": map[string]any{"user": map[string]any{"id": humanID, "username": "dev"}, "roles": append([]string{}, roles...)},
		"message": map[string]any{"id": msg.ID, "channel_id": channelID, "content": msg.Content,
			"author": map[string]any{"id": botID, "bot": true}},
		"data": map[string]any{"custom_id": customID, "component_type": 2},
	})
	return b
}

// dispatchPress sends a press over the gateway and returns the bot's answer (type and
// data) once it has called back.
func dispatchPress(t *testing.T, f *fakeDiscord, body []byte) (int, map[string]any) {
	t.Helper()
	var ev map[string]any
	_ = json.Unmarshal(body, &ev)
	f.dispatch("INTERACTION_CREATE", ev)
	id := ev["id"].(string)
	var typ int
	var data string
	waitFor(t, "the press answered", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		typ, data = f.acks[id], f.responses[id]
		return typ != 0
	})
	var d map[string]any
	_ = json.Unmarshal([]byte(data), &d)
	return typ, d
}

func (f *fakeDiscord) editsOf(id string) []post {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []post
	for _, e := range f.edits {
		if e.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// A turn that runs a while gets one status message in its thread: posted with a Stop
// button, edited in place as its steps come, at most once per interval, and ended
// with how it went and no button; the reply follows as before.
func TestTurnStatusIsEditedInPlace(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	liveHub(t, f, nil)
	const root = "990000000000000001"
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> paced 6 0.25", true))
	posts := f.waitPosts(t, root, "the status and the reply", func(p []post) bool { return len(p) >= 2 })
	status := posts[0]
	if !strings.HasPrefix(status.Content, "⏳ Working… ") || strings.Join(customIDs(status.Components), ",") != "wshub:stop:"+turnOf(t, status) {
		t.Fatalf("expected a Working… status with a Stop button first, got %+v", status)
	}
	if posts[1].Content != "did 6 paced steps" || len(posts) != 2 {
		t.Fatalf("expected the reply after the status and nothing else, got %+v", posts)
	}
	var edits []post
	waitFor(t, "the final edit", func() bool {
		edits = f.editsOf(status.ID)
		return len(edits) > 0 && strings.HasPrefix(edits[len(edits)-1].Content, "✅ Finished in ")
	})
	final := edits[len(edits)-1]
	if !strings.HasSuffix(final.Content, " · 6 steps") || final.Components != "" {
		t.Fatalf("expected the final status to count 6 steps with no button, got %+v", final)
	}
	sawSteps := false
	at := []time.Time{status.At}
	for _, e := range edits {
		sawSteps = sawSteps || strings.Contains(e.Content, "• bash `step ")
		at = append(at, e.At)
	}
	if !sawSteps {
		t.Fatalf("expected edits showing the steps, got %+v", edits)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < statusEvery-50*time.Millisecond {
			t.Fatalf("expected edits at least %s apart, got %s", statusEvery, gap)
		}
	}
}

// approvalPost waits for a post in thread with Allow and Deny, other than not.
func approvalPost(t *testing.T, f *fakeDiscord, thread, not string) post {
	t.Helper()
	var found post
	f.waitPosts(t, thread, "an approval", func(ps []post) bool {
		for _, p := range ps {
			if len(customIDs(p.Components)) == 2 && p.ID != not {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// turnOf is the turn a status's Stop button names.
func turnOf(t *testing.T, status post) string {
	t.Helper()
	for _, id := range customIDs(status.Components) {
		if turn, ok := strings.CutPrefix(id, "wshub:stop:"); ok {
			return turn
		}
	}
	t.Fatalf("expected a Stop button on %+v", status)
	return ""
}

// Stop, pressed over the gateway, ends the turn interrupted; pressed again over HTTP,
// it says the turn has ended. Both answers are for the member alone.
func TestStopButtonEndsTheTurn(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := liveHub(t, f, nil)
	const root = "990000000000000101"
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> sleep 30", true))
	status := f.waitPosts(t, root, "the status", func(p []post) bool { return len(p) >= 1 })[0]
	stop := "wshub:stop:" + turnOf(t, status)
	pressed := time.Now()
	typ, data := dispatchPress(t, f, buttonPress("990000000000000102", root, status, stop))
	if typ != 4 || data["content"] != "Stopping the turn." || data["flags"] != float64(64) {
		t.Fatalf("expected an ephemeral answer to the press, got %d %v", typ, data)
	}
	posts := f.waitPosts(t, root, "the interrupted reply", func(p []post) bool { return len(p) >= 2 })
	if !strings.Contains(posts[1].Content, "interrupted") || time.Since(pressed) > 5*time.Second {
		t.Fatalf("expected the turn interrupted at once, got %+v after %s", posts[1], time.Since(pressed))
	}
	waitFor(t, "the stopped status", func() bool {
		e := f.editsOf(status.ID)
		return len(e) > 0 && strings.HasPrefix(e[len(e)-1].Content, "⏹️ Stopped after ")
	})
	r := signedInteraction(t, h, buttonPress("990000000000000103", root, status, stop), appKey)
	if r.Status != 200 || r.Body["type"] != float64(4) || r.Body["data"].(map[string]any)["content"] != "That turn has already ended." {
		t.Fatalf("expected the second press told the turn ended, got %d %s", r.Status, r.Raw)
	}
}

// An approval appears with Allow and Deny; a member without the bound role is
// refused (ephemeral) and nothing is decided; Allow edits the message to say who
// allowed it, without buttons, and the agent goes on; a second press (Deny, over
// HTTP) changes nothing and says the same.
func TestApprovalButtons(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	// The binding starts workspaces in the approval-required mode, for one role.
	h := liveHub(t, f, &core.ChatBinding{Roles: []string{roleDevs}, RuntimeMode: core.ModeApprovalRequired})
	const root = "990000000000000201"
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> ask one two", true, roleDevs))
	ask := approvalPost(t, f, root, "")
	ids := customIDs(ask.Components)
	approval := strings.TrimPrefix(ids[0], "wshub:allow:")
	if ask.Content != "🔒 The agent asks to run bash:\n```\nrm -rf one\n```\nAllow it?" || ids[1] != "wshub:deny:"+approval || !ask.NoPings {
		t.Fatalf("expected the question with Allow and Deny, got %+v", ask)
	}

	r := signedInteraction(t, h, buttonPress("990000000000000203", root, ask, ids[0]), appKey)
	if d, _ := r.Body["data"].(map[string]any); r.Body["type"] != float64(4) || d["flags"] != float64(64) ||
		!strings.Contains(d["content"].(string), "roles") {
		t.Fatalf("expected a member without the role refused privately, got %s", r.Raw)
	}
	typ, data := dispatchPress(t, f, buttonPress("990000000000000204", root, ask, ids[0], roleDevs))
	want := ask.Content + "\n✅ Allowed by <@" + humanID + ">"
	if typ != 7 || data["content"] != want || len(data["components"].([]any)) != 0 {
		t.Fatalf("expected the message updated to say who allowed it, without buttons, got %d %v", typ, data)
	}
	r = signedInteraction(t, h, buttonPress("990000000000000205", root, ask, ids[1], roleDevs), appKey)
	if d, _ := r.Body["data"].(map[string]any); r.Body["type"] != float64(7) || d["content"] != want {
		t.Fatalf("expected a second press to show the first decision, got %s", r.Raw)
	}
	// The second ask, decided through the API: the thread's message says so too, and
	// loses its buttons.
	second := approvalPost(t, f, root, ask.ID)
	ws := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Body["workspaces"].([]any)[0].(map[string]any)
	h.Call("POST", "/v1/api/workspaces/"+ws["workspaceId"].(string)+"/approvals/"+
		strings.TrimPrefix(customIDs(second.Components)[1], "wshub:deny:"), h.Key, map[string]any{"decision": "deny"}).Expect(t, 200, "")
	waitFor(t, "the API's decision shown", func() bool {
		e := f.editsOf(second.ID)
		return len(e) > 0 && e[len(e)-1].Content == second.Content+"\n❌ Denied by the API key test" && e[len(e)-1].Components == ""
	})
	posts := f.waitPosts(t, root, "the turn's reply", func(p []post) bool {
		return strings.Contains(p[len(p)-1].Content, "approval_resolved")
	})
	if reply := posts[len(posts)-1].Content; !strings.Contains(reply, `"id":"one","decision":"allow"`) ||
		!strings.Contains(reply, `"id":"two","decision":"deny"`) {
		t.Fatalf("expected the agent allowed once and denied once, got %q", reply)
	}
}

// An approval shows the command whole in its question; one too long for a message
// says how much more there is and carries the whole input as an attachment; Allow
// lets exactly the shown input run (its hash in the agent's answer).
func TestApprovalQuestionShowsTheWholeCommand(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	liveHub(t, f, &core.ChatBinding{RuntimeMode: core.ModeApprovalRequired})
	long := hubtest.HiddenTail + strings.Repeat(" && echo more", 200)
	for i, command := range []string{hubtest.HiddenTail, long} {
		root := "99000000000000030" + string(rune('0'+i))
		f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> run "+command, true))
		ask := approvalPost(t, f, root, "")
		_, block, _ := strings.Cut(ask.Content, "```\n")
		block, _, _ = strings.Cut(block, "\n```")
		if command == hubtest.HiddenTail {
			if block != hubtest.HiddenTail || len(ask.Files) != 0 || !ask.NoPings {
				t.Fatalf("expected the whole command, tail and all, in the question, got %q (files %d)", ask.Content, len(ask.Files))
			}
		} else {
			more := len(long) - len(block)
			if !strings.HasPrefix(long, block) || !strings.Contains(ask.Content, fmt.Sprintf("%d more characters: see the attached file", more)) {
				t.Fatalf("expected the question to say %d more characters are in the file, got %q", more, ask.Content)
			}
			var in map[string]string
			if len(ask.Files) != 1 || json.Unmarshal(ask.Files[customIDsApproval(ask)], &in) != nil || in["command"] != long {
				t.Fatalf("expected the whole input attached, got %v", ask.Files)
			}
		}
		typ, _ := dispatchPress(t, f, buttonPress(fmt.Sprintf("99000000000000031%d", i), root, ask, customIDs(ask.Components)[0]))
		if typ != 7 {
			t.Fatalf("expected the press taken, got %d", typ)
		}
		want := `"decision":"allow","sha256":"` + hubtest.CommandHash(command) + `"`
		f.waitPosts(t, root, "the agent told to run exactly that input", func(p []post) bool {
			return strings.Contains(p[len(p)-1].Content, want)
		})
	}
}

// customIDsApproval is the attachment's name for the approval ask asks about.
func customIDsApproval(ask post) string {
	return "approval-" + strings.TrimPrefix(customIDs(ask.Components)[0], "wshub:allow:") + ".json"
}
