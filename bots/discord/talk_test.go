package discord_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// waitFor polls cond until it holds, failing after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventually.Eventually(t, 30*time.Second, what, cond)
}

func scrape(t *testing.T, h *hubtest.Hub) string {
	t.Helper()
	resp, err := http.Get(h.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// The gateway's INTERACTION_CREATE is acknowledged over REST at once (deferred), and
// /workspace inside a workspace's thread sends it a message. Commands and `follow all`
// work in the thread; metrics carry platform="discord".
func TestGatewayCommandsAndThreadConversation(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)
	var cmd map[string]any
	raw := workspaceCommand("981000000000000001", "tok-g", channel, "write over-gateway")
	if err := jsonUnmarshal(raw, &cmd); err != nil {
		t.Fatal(err)
	}
	f.dispatch("INTERACTION_CREATE", cmd)
	var thread string
	waitFor(t, "the command acknowledged and answered with a thread", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		thread = f.origIDs["tok-g"]
		return f.acks["981000000000000001"] == 5 && strings.HasPrefix(f.originals["tok-g"], "Started workspace")
	})
	f.waitPosts(t, thread, "the reply", func(p []post) bool { return len(p) >= 1 })

	// /workspace in the thread: a message for its workspace.
	if err := jsonUnmarshal(workspaceCommand("981000000000000002", "tok-g2", thread, "second"), &cmd); err != nil {
		t.Fatal(err)
	}
	f.dispatch("INTERACTION_CREATE", cmd)
	f.waitPosts(t, thread, "the second reply", func(p []post) bool { return len(p) >= 2 })
	f.mu.Lock()
	sent := f.originals["tok-g2"]
	f.mu.Unlock()
	if !strings.HasPrefix(sent, "Sent to workspace `ws_") {
		t.Fatalf("expected the in-thread command answered as sent, got %q", sent)
	}

	// Commands, and `follow all`: then an unmentioned message is the agent's.
	f.dispatch("MESSAGE_CREATE", messageCreate("981000000000000003", thread, "<@"+botID+"> status", true))
	posts := f.waitPosts(t, thread, "the status", func(p []post) bool { return len(p) >= 3 })
	if !strings.Contains(posts[2].Content, "is **ready**") || !strings.Contains(posts[2].Content, "Claude Code (agent_1)") {
		t.Fatalf("expected the status, got %q", posts[2].Content)
	}
	f.dispatch("MESSAGE_CREATE", messageCreate("981000000000000004", thread, "<@!"+botID+"> follow all", true))
	f.waitPosts(t, thread, "follow confirmed", func(p []post) bool { return len(p) >= 4 })
	f.dispatch("MESSAGE_CREATE", messageCreate("981000000000000005", thread, "third without a mention", false))
	posts = f.waitPosts(t, thread, "the third reply", func(p []post) bool { return len(p) >= 5 })
	if posts[4].Content != "echo: third without a mention" {
		t.Fatalf("expected the followed message answered, got %q", posts[4].Content)
	}
	// Counted once the post's answer is read, a moment after the fake saw it.
	for _, want := range []string{`wshub_chat_events_total{platform="discord",result="handled"}`, `wshub_chat_posts_total{kind="reply",platform="discord",result="posted"} 3`} {
		waitFor(t, want+" in /metrics", func() bool { return strings.Contains(scrape(t, h), want) })
	}
}

// Files on a mention reach the agent; one over 20 MiB is refused before anything is
// downloaded, with a plain answer.
func TestAttachmentsReachTheAgent(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	discordHub(t, f, nil)
	f.mu.Lock()
	f.files["1/notes.txt"] = []byte("line of notes")
	f.mu.Unlock()
	ev := messageCreate("982000000000000001", channel, "<@"+botID+"> attachments", true)
	ev["attachments"] = []any{map[string]any{"id": "982000000000000009", "filename": "notes.txt", "size": 13,
		"content_type": "text/plain", "url": "https://cdn.discordapp.com/attachments/1/notes.txt"}}
	f.dispatch("MESSAGE_CREATE", ev)
	posts := f.waitPosts(t, "982000000000000001", "the reply", func(p []post) bool { return len(p) >= 1 })
	if !strings.HasSuffix(posts[0].Content, "-notes.txt=line of notes") {
		t.Fatalf("expected the agent to read the attachment, got %q", posts[0].Content)
	}

	big := messageCreate("982000000000000002", channel, "<@"+botID+"> write big", true)
	big["attachments"] = []any{map[string]any{"id": "982000000000000010", "filename": "huge.bin", "size": 21 << 20,
		"content_type": "application/octet-stream", "url": "https://cdn.discordapp.com/attachments/1/missing.bin"}}
	f.dispatch("MESSAGE_CREATE", big)
	posts = f.waitPosts(t, "982000000000000002", "the refusal", func(p []post) bool { return len(p) >= 1 })
	if !strings.Contains(posts[0].Content, "larger than 20 MiB") {
		t.Fatalf("expected the file refused in words, got %q", posts[0].Content)
	}
}

// A workspace that fails during setup is announced in its thread, once.
func TestWorkspaceFailureIsAnnouncedInTheThread(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)
	for _, dir := range []string{h.Project.MirrorPath, h.Project.Repository} { // nothing to clone it again from
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	const root = "983000000000000001"
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> write doomed", true))
	posts := f.waitPosts(t, root, "the failure notice", func(p []post) bool { return len(p) >= 1 })
	if !strings.HasPrefix(posts[0].Content, "⚠️ Workspace `ws_") || !strings.Contains(posts[0].Content, "could not be set up") {
		t.Fatalf("expected the failure told in the thread, got %q", posts[0].Content)
	}
	// A second doomed workspace's notice, told after it, is when a repeat of the first would have come.
	const second = "983000000000000002"
	f.dispatch("MESSAGE_CREATE", messageCreate(second, channel, "<@"+botID+"> write doomed too", true))
	f.waitPosts(t, second, "the second failure notice", func(p []post) bool { return len(p) >= 1 })
	if posts = f.waitPosts(t, root, "", func([]post) bool { return true }); len(posts) != 1 {
		t.Fatalf("expected the failure told once, got %+v", posts)
	}
}

// A command the binding refuses, or one from a direct message, is answered at once
// with an ephemeral refusal, and nothing is stored.
func TestRefusedCommandsAreEphemeral(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, &core.ChatBinding{Roles: []string{roleDevs}})
	cases := map[string][]byte{
		"no role": workspaceCommand("984000000000000001", "tok-r", channel, "write x"),
		"direct message": func() []byte {
			var m map[string]any
			_ = jsonUnmarshal(workspaceCommand("984000000000000002", "tok-d", "925000000000000001", "write y", roleDevs), &m)
			delete(m, "guild_id")
			delete(m, "member")
			m["user"] = map[string]any{"id": humanID, "username": "dev"}
			b, _ := json.Marshal(m)
			return b
		}(),
	}
	for name, body := range cases {
		r := signedInteraction(t, h, body, appKey)
		data, _ := r.Body["data"].(map[string]any)
		if r.Status != 200 || r.Body["type"] != float64(4) || data["flags"] != float64(64) {
			t.Fatalf("%s: expected an ephemeral message (type 4, flags 64), got %d %s", name, r.Status, r.Raw)
		}
		if content, _ := data["content"].(string); !strings.Contains(content, "can't") && !strings.Contains(content, "only work in a server") {
			t.Fatalf("%s: expected the refusal to say why, got %q", name, content)
		}
	}
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM chat_inbox`); err != nil || n != 0 {
		t.Fatalf("expected nothing stored, got %d (%v)", n, err)
	}
	// With the role: deferred and started.
	r := signedInteraction(t, h, workspaceCommand("984000000000000003", "tok-ok", channel, "write ok", roleDevs), appKey)
	if r.Body["type"] != float64(5) {
		t.Fatalf("expected a deferred response with the role, got %s", r.Raw)
	}
}

// A reply longer than a post is split under 2,000 characters; a code block cut between
// posts is closed and reopened, so every post renders.
func TestLongRepliesAreSplitWithCodeBlocksIntact(t *testing.T) {
	reply := "Here:\n```go\n" + strings.Repeat("fmt.Println(\"line\")\n", 300) + "```\nDone."
	parts := chat.Discord.FormatReply(chat.Reply{Text: reply, Outcome: "completed"}, 2000)
	if len(parts) < 4 {
		t.Fatalf("expected the 6,000-character reply in several posts, got %d", len(parts))
	}
	for i, p := range parts {
		if n := len([]rune(p)); n > 2000 {
			t.Fatalf("part %d: %d characters, over Discord's 2,000", i, n)
		}
		if strings.Count(p, "```")%2 != 0 {
			t.Fatalf("part %d leaves a code block open:\n%s", i, p)
		}
		if i > 0 && i < len(parts)-1 && !strings.HasPrefix(p, "```go\n") {
			t.Fatalf("part %d: expected the block reopened with its language, got %.20q", i, p)
		}
	}
}

// Chatter in a plain channel is neither stored nor looked up: only mentions and
// messages in a workspace's thread reach the inbox.
func TestPlainChannelChatterIsNotStored(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)
	f.dispatch("MESSAGE_CREATE", messageCreate("985000000000000001", channel, "just talking", false))
	f.dispatch("MESSAGE_CREATE", messageCreate("985000000000000002", channel, "<@"+botID+"> write ping", true))
	f.waitPosts(t, "985000000000000002", "the mention's reply", func(p []post) bool { return len(p) >= 1 })
	var ids []string
	if err := h.PG().DB().Select(&ids, `SELECT event_id FROM chat_inbox ORDER BY event_id`); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "message:985000000000000002" {
		t.Fatalf("expected only the mention stored, got %v", ids)
	}
}
