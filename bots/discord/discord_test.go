package discord_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

const botToken = "fake-bot-token"

// appKey signs interactions as Discord would (its public half is the hub's).
var appPub, appKey, _ = ed25519.GenerateKey(nil)

func discordHub(t testing.TB, f *fakeDiscord, bind *core.ChatBinding, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)), hubtest.WithConfig(func(c *hub.Config) {
		c.DiscordBotToken, c.DiscordPublicKey, c.DiscordAppID = botToken, hex.EncodeToString(appPub), appID
		c.DiscordHTTPClient = f.Client()
		// Only turns longer than this get a status message: on a busy machine a quick
		// turn could take 2 s, and these tests look for the reply alone (the status
		// tests set their own).
		c.ChatStatusEvery = time.Minute
	})}, opts...)...)
	if bind == nil {
		bind = &core.ChatBinding{}
	}
	bind.Platform, bind.TeamID, bind.AccountID = core.PlatformDiscord, guildID, h.Account.ID
	if bind.Agent == "" {
		bind.Agent, bind.Model = "agent_1", "test-model"
	}
	if err := h.Service.Admin.BindChat(context.Background(), bind); err != nil {
		t.Fatalf("bind: %v", err)
	}
	f.waitReady(t)
	return h
}

func TestMentionStartsAWorkspaceInANewThread(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)
	const root = "960000000000000001"
	ev := messageCreate(root, channel, "<@"+botID+"> write hello\nand more", true)
	f.dispatch("MESSAGE_CREATE", ev)
	f.dispatch("MESSAGE_CREATE", ev) // a replay (RESUME): the same message id
	posts := f.waitPosts(t, root, "the agent's reply in the thread", func(p []post) bool { return len(p) >= 1 })
	if posts[0].Content != "wrote hello.txt" || !posts[0].NoPings {
		t.Fatalf("expected the reply %q in thread %s, allowing no pings, got %+v", "wrote hello.txt", root, posts[0])
	}
	f.mu.Lock()
	parent, joined := f.threads[root], append([]string(nil), f.joined...)
	f.mu.Unlock()
	if parent != channel || len(joined) == 0 || joined[0] != root {
		t.Fatalf("expected a thread on the message in %s, joined by the bot; got parent %q, joined %v", channel, parent, joined)
	}
	list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
	if len(list) != 1 {
		t.Fatalf("expected one workspace despite the replay, got %d", len(list))
	}
	id := list[0].(map[string]any)["workspaceId"].(string)

	// In the thread: a follow-up mention, an unmentioned message (ignored until
	// `follow all`), then a message through the API; answered in order.
	f.dispatch("MESSAGE_CREATE", messageCreate("960000000000000002", root, "<@"+botID+"> second", true))
	f.waitPosts(t, root, "the second reply", func(p []post) bool { return len(p) >= 2 })
	f.dispatch("MESSAGE_CREATE", messageCreate("960000000000000003", root, "just chatting", false))
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "from the api"}).Expect(t, 200, "")
	posts = f.waitPosts(t, root, "the API message's reply", func(p []post) bool { return len(p) >= 3 })
	got := []string{posts[0].Content, posts[1].Content, posts[2].Content}
	if want := "wrote hello.txt|echo: second|echo: from the api"; strings.Join(got, "|") != want {
		t.Fatalf("expected replies %q in order, got %q", want, got)
	}
	msgs := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Body["messages"].([]any)
	if len(msgs) != 6 || msgs[0].(map[string]any)["text"] != "write hello\nand more" {
		t.Fatalf("expected 6 messages, the first the mention without the mention, got %d: %v", len(msgs), msgs[0])
	}
	// The Discord messages name their writer by the name the server shows.
	for _, i := range []int{0, 2} {
		if a, _ := msgs[i].(map[string]any)["author"].(map[string]any); a["kind"] != "discord" || a["id"] != humanID || a["name"] != "Dev Person" {
			t.Errorf("message %d: expected the Discord author, got %v", i, a)
		}
	}
	var stored [][]byte
	if err := h.PG().DB().Select(&stored, `SELECT payload_sealed FROM chat_inbox WHERE platform = 'discord'`); err != nil || len(stored) != 3 {
		t.Fatalf("expected the three distinct messages in the inbox (the replay dropped), got %d (%v)", len(stored), err)
	}
	for _, p := range stored {
		if bytes.Contains(p, []byte("write hello")) {
			t.Fatalf("expected stored events sealed, found plaintext")
		}
	}
}

// signedInteraction posts an interaction to the hub as Discord does.
func signedInteraction(t *testing.T, h *hubtest.Hub, body []byte, key ed25519.PrivateKey) *hubtest.Response {
	t.Helper()
	return signedInteractionAt(t, h, body, key, time.Now())
}

// signedInteractionAt signs an interaction with the timestamp at.
func signedInteractionAt(t *testing.T, h *hubtest.Hub, body []byte, key ed25519.PrivateKey, at time.Time) *hubtest.Response {
	t.Helper()
	ts := fmt.Sprint(at.Unix())
	sig := hex.EncodeToString(ed25519.Sign(key, append([]byte(ts), body...)))
	r, err := h.Try("POST", "/discord/interactions", "", body, "X-Signature-Ed25519", sig, "X-Signature-Timestamp", ts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInteractionSignedMoreThanFiveMinutesFromNowIsRefused(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	clock := hubtest.NewClock()
	h := discordHub(t, f, nil, hubtest.WithClock(clock))
	ping := []byte(`{"id":"980000000000000009","application_id":"` + appID + `","type":1,"token":"t","version":1}`)
	for _, c := range []struct {
		name   string
		at     time.Duration
		status int
	}{
		{"now", 0, 200},
		{"four minutes old", -4 * time.Minute, 200},
		{"four minutes ahead", 4 * time.Minute, 200},
		{"six minutes old: a replay", -6 * time.Minute, 401},
		{"a day old: a replay", -24 * time.Hour, 401},
		{"six minutes ahead", 6 * time.Minute, 401},
	} {
		if r := signedInteractionAt(t, h, ping, appKey, clock.Now().Add(c.at)); r.Status != c.status {
			t.Errorf("%s: expected %d, got %d %s", c.name, c.status, r.Status, r.Raw)
		}
	}
}

func workspaceCommand(id, token, channelID, prompt string, roles ...string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "application_id": appID, "type": 2, "token": token, "guild_id": guildID, "channel_id": channelID, "version": 1,
		"member": map[string]any{"user": map[string]any{"id": humanID, "username": "dev"}, "roles": append([]string{}, roles...)},
		"data": map[string]any{"id": "970000000000000001", "name": "workspace", "type": 1,
			"options": []any{map[string]any{"name": "prompt", "type": 3, "value": prompt}}},
	})
	return b
}

func TestWorkspaceCommandOverHTTP(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)

	ping := []byte(`{"id":"980000000000000001","application_id":"` + appID + `","type":1,"token":"t","version":1}`)
	if r := signedInteraction(t, h, ping, appKey); r.Status != 200 || r.Body["type"] != float64(1) {
		t.Fatalf("expected PONG to a signed PING, got %d %s", r.Status, r.Raw)
	}
	// A bad signature: 401, and nothing stored.
	_, otherKey, _ := ed25519.GenerateKey(nil)
	cmd := workspaceCommand("980000000000000002", "tok-1", channel, "write from-command")
	if r := signedInteraction(t, h, cmd, otherKey); r.Status != 401 {
		t.Fatalf("expected 401 for a bad signature, got %d %s", r.Status, r.Raw)
	}
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM chat_inbox`); err != nil || n != 0 {
		t.Fatalf("expected nothing stored for a bad signature, got %d (%v)", n, err)
	}

	r := signedInteraction(t, h, cmd, appKey)
	if r.Status != 200 || r.Body["type"] != float64(5) {
		t.Fatalf("expected a deferred response (type 5), got %d %s", r.Status, r.Raw)
	}
	signedInteraction(t, h, cmd, appKey) // Discord does not retry, but a replay is harmless
	var original, thread string
	eventually.Within(30*time.Second, func() bool {
		f.mu.Lock()
		original, thread = f.originals["tok-1"], f.origIDs["tok-1"]
		f.mu.Unlock()
		return strings.HasPrefix(original, "Started workspace")
	})
	if !strings.HasPrefix(original, "Started workspace `ws_") || !strings.Contains(original, "<#"+thread+">") {
		t.Fatalf("expected the response edited into a link to thread %s, got %q", thread, original)
	}
	posts := f.waitPosts(t, thread, "the agent's reply in the command's thread", func(p []post) bool { return len(p) >= 1 })
	if posts[0].Content != "wrote from-command.txt" {
		t.Fatalf("expected the reply in the thread, got %+v", posts)
	}
	if list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Body["workspaces"].([]any); len(list) != 1 {
		t.Fatalf("expected one workspace, got %d", len(list))
	}
}

func TestBindingLimitsWhoAndWhere(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, &core.ChatBinding{Roles: []string{roleDevs}, Channels: []string{channel}})

	// No role: refused with a reply in the channel, nothing started.
	f.dispatch("MESSAGE_CREATE", messageCreate("961000000000000001", channel, "<@"+botID+"> write x", true))
	posts := f.waitPosts(t, channel, "a refusal", func(p []post) bool { return len(p) >= 1 })
	if !strings.Contains(posts[0].Content, "limits them to some roles or channels") {
		t.Fatalf("expected the refusal to say why, got %q", posts[0].Content)
	}
	// Another channel, with the role: refused too.
	const other = "920000000000000099"
	f.dispatch("MESSAGE_CREATE", messageCreate("961000000000000002", other, "<@"+botID+"> write y", true, roleDevs))
	f.waitPosts(t, other, "a refusal", func(p []post) bool { return len(p) >= 1 })
	if list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Body["workspaces"].([]any); len(list) != 0 {
		t.Fatalf("expected no workspace started, got %d", len(list))
	}
	// The role, in the channel: started.
	f.dispatch("MESSAGE_CREATE", messageCreate("961000000000000003", channel, "<@"+botID+"> write z", true, roleDevs))
	f.waitPosts(t, "961000000000000003", "the reply", func(p []post) bool { return len(p) >= 1 })
}

func TestRateLimitedReplyIsWaitedOutAndPostedOnce(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	f.failPost = func(w http.ResponseWriter, n int) bool {
		if n > 1 {
			return false
		}
		w.Header().Set("Retry-After", "1")
		writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": 0.3, "global": false})
		return true
	}
	discordHub(t, f, nil)
	const root = "962000000000000001"
	start := time.Now()
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> write limited", true))
	f.waitPosts(t, root, "the reply after the 429", func(p []post) bool { return len(p) >= 1 })
	// A later message's reply is when a second post of the first would have come.
	const later = "962000000000000002"
	f.dispatch("MESSAGE_CREATE", messageCreate(later, channel, "<@"+botID+"> write later", true))
	f.waitPosts(t, later, "the later message's reply", func(p []post) bool { return len(p) >= 1 })
	posts := f.waitPosts(t, root, "", func(p []post) bool { return true })
	if len(posts) != 1 || posts[0].Content != "wrote limited.txt" || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("expected the reply posted once after retry_after, got %+v", posts)
	}
}
