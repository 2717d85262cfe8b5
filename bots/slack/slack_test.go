package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

func TestMentionStartsAWorkspaceAndTheReplyComesBackInTheThread(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, true)
	const root = "1700000000.000100"
	body := eventBody("Ev0001", mention(root, "", "<@"+botUser+"> write hello"))
	if status, _ := deliver(t, h, body); status != 200 {
		t.Fatalf("expected 200 for a signed event, got %d", status)
	}
	// Slack retries the same event (same event_id) when it thinks we were slow.
	if status, _ := deliver(t, h, body); status != 200 {
		t.Fatalf("expected 200 for the retried event, got %d", status)
	}
	posts := f.waitPosts(t, root, "the agent's reply", func(p []post) bool { return len(p) >= 1 })
	if posts[0].Channel != channel || posts[0].Text != "wrote hello.txt" {
		t.Fatalf("expected the reply %q in %s, got %+v", "wrote hello.txt", channel, posts[0])
	}
	list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
	if len(list) != 1 {
		t.Fatalf("expected the Slack workspace in the API list (one, despite the retry), got %d", len(list))
	}
	id := list[0].(map[string]any)["workspaceId"].(string)

	// A follow-up mention in the thread, then a message through the API: both answered
	// in the thread, in order.
	deliver(t, h, eventBody("Ev0002", mention("1700000001.000200", root, "<@"+botUser+"> second")))
	f.waitPosts(t, root, "the second reply", func(p []post) bool { return len(p) >= 2 })
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "from the api"}).Expect(t, 200, "")
	posts = f.waitPosts(t, root, "the API message's reply", func(p []post) bool { return len(p) >= 3 })
	got := []string{posts[0].Text, posts[1].Text, posts[2].Text}
	want := []string{"wrote hello.txt", "echo: second", "echo: from the api"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("expected replies %q in order, got %q", want, got)
	}
	msgs := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Body["messages"].([]any)
	if len(msgs) != 6 || msgs[0].(map[string]any)["text"] != "write hello" {
		t.Fatalf("expected 6 messages, the first the mention without the mention, got %d: %v", len(msgs), msgs[0])
	}
	// Each message names who wrote it: the Slack member by their display name, the API
	// message by its key.
	for i, want := range map[int]string{0: "slack UHUMAN01 Ada Lovelace", 2: "slack UHUMAN01 Ada Lovelace", 4: "api test"} {
		a, _ := msgs[i].(map[string]any)["author"].(map[string]any)
		got := fmt.Sprint(a["kind"], " ", a["id"], " ", a["name"])
		if a["kind"] == "api" {
			got = fmt.Sprint(a["kind"], " ", a["name"])
		}
		if got != want {
			t.Errorf("message %d: expected the author %q, got %v", i, want, a)
		}
	}
	var stored [][]byte // received events carry message text: sealed at rest
	if err := h.PG().DB().Select(&stored, `SELECT payload_sealed FROM chat_inbox`); err != nil || len(stored) != 2 {
		t.Fatalf("expected the two distinct events in the inbox, got %d (%v)", len(stored), err)
	}
	for _, p := range stored {
		if strings.Contains(string(p), "write hello") || strings.Contains(string(p), channel) {
			t.Fatalf("expected stored events sealed, found plaintext in %q", p)
		}
	}
	f.mu.Lock()
	reactions := append([]string(nil), f.reactions...)
	f.mu.Unlock()
	if len(reactions) == 0 || reactions[0] != "eyes "+channel+" "+root {
		t.Fatalf("expected an eyes reaction on the first message, got %v", reactions)
	}
}

func TestBadSignatureIsRefusedAndDoesNothing(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, true)
	body := eventBody("Ev0bad", mention("1700000000.000900", "", "<@"+botUser+"> write nope"))
	ts, wrongSecret := sign(body, "another-secret", time.Now())
	_, otherBody := sign(append(append([]byte(nil), body...), ' '), signingSecret, time.Now())
	oldTS, oldSig := sign(body, signingSecret, time.Now().Add(-10*time.Minute))
	cases := map[string][2]string{
		"wrong secret": {ts, wrongSecret},
		"no signature": {ts, ""},
		"stale":        {oldTS, oldSig},
		"other body":   {ts, otherBody},
	}
	for name, c := range cases {
		if status, _ := deliverSigned(t, h, body, c[0], c[1]); status != 401 {
			t.Fatalf("%s: expected 401, got %d", name, status)
		}
	}
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM chat_inbox`); err != nil || n != 0 {
		t.Fatalf("expected nothing stored for refused requests, got %d (%v)", n, err)
	}
	// Nothing stored is nothing to post: a refused request starts no work that could post later.
	if p := f.Posts(); len(p) != 0 {
		t.Fatalf("expected no posts, got %+v", p)
	}
}

func TestURLVerificationIsAnswered(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, false)
	status, body := deliver(t, h, []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`))
	if status != 200 || !strings.Contains(body, `"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"`) {
		t.Fatalf("expected the challenge echoed, got %d %s", status, body)
	}
}

func TestFilesOnTheMentionReachTheAgent(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, true)
	f.files["F0NOTES"] = []byte("remember the milk")
	const root = "1700000100.000100"
	ev := mention(root, "", "<@"+botUser+"> attachments")
	ev["files"] = []map[string]any{{"id": "F0NOTES", "name": "notes.txt", "mimetype": "text/plain", "size": 17,
		"url_private_download": f.fileURL("F0NOTES")}}
	deliver(t, h, eventBody("Ev0file", ev))
	posts := f.waitPosts(t, root, "the reply naming the file", func(p []post) bool { return len(p) >= 1 })
	if !strings.HasSuffix(posts[0].Text, "-notes.txt=remember the milk") || !strings.Contains(posts[0].Text, ".context/files/asset_") {
		t.Fatalf("expected the agent to read the attached file, got %q", posts[0].Text)
	}

	const big = "1700000101.000100"
	ev = mention(big, "", "<@"+botUser+"> attachments")
	ev["files"] = []map[string]any{{"id": "F0BIG", "name": "huge.bin", "mimetype": "text/plain", "size": 21 << 20,
		"url_private_download": f.fileURL("F0BIG")}}
	deliver(t, h, eventBody("Ev0big", ev))
	posts = f.waitPosts(t, big, "the size refusal", func(p []post) bool { return len(p) >= 1 })
	if !strings.Contains(posts[0].Text, "larger than 20 MiB") {
		t.Fatalf("expected a file over 20 MiB refused in plain words, got %q", posts[0].Text)
	}

	// A file Slack no longer has (404) will not come with retries: the person is told
	// at once, and nothing is started.
	const gone = "1700000102.000100"
	ev = mention(gone, "", "<@"+botUser+"> attachments")
	ev["files"] = []map[string]any{{"id": "F0GONE", "name": "gone.txt", "mimetype": "text/plain", "size": 3,
		"url_private_download": f.fileURL("F0GONE")}}
	deliver(t, h, eventBody("Ev0gone", ev))
	posts = f.waitPosts(t, gone, "the download refusal", func(p []post) bool { return len(p) >= 1 })
	if posts[0].Text != chat.FilesNotDownloaded {
		t.Fatalf("expected a file Slack no longer has to be said at once, got %q", posts[0].Text)
	}
}

func TestCommandsAndRefusalsInPlainWords(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, false)
	const root = "1700000200.000100"
	say := func(id, ts, thread, text string) {
		deliver(t, h, eventBody(id, mention(ts, thread, "<@"+botUser+"> "+text)))
	}
	expect := func(ts, want string, n int) {
		t.Helper()
		posts := f.waitPosts(t, ts, want, func(p []post) bool { return len(p) >= n })
		if !strings.Contains(posts[n-1].Text, want) {
			t.Fatalf("expected post %d in %s to say %q, got %q", n, ts, want, posts[n-1].Text)
		}
	}
	say("Ev1", root, "", "write hello")
	expect(root, "isn't connected to a wshub account", 1)

	// Bound without agent and model, and the account has no workspace to take them from.
	if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team, AccountID: h.Account.ID}); err != nil {
		t.Fatal(err)
	}
	say("Ev2", "1700000201.000100", "", "write hello")
	expect("1700000201.000100", "No agent and model are chosen", 1)

	if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team, AccountID: h.Account.ID,
		Agent: "agent_1", Model: "test-model"}); err != nil {
		t.Fatal(err)
	}
	say("Ev3", "1700000202.000100", "", "help")
	expect("1700000202.000100", "follow all", 1)
	say("Ev4", "1700000203.000100", "", "use nosuchproject")
	expect("1700000203.000100", "I don't know that project", 1)
	say("Ev5", "1700000204.000100", "", "status")
	expect("1700000204.000100", "no workspace in this thread", 1)

	const thread = "1700000300.000100"
	say("Ev6", thread, "", "write one")
	expect(thread, "wrote one.txt", 1)
	say("Ev7", "1700000301.000100", thread, "status")
	expect(thread, "Agent Claude Code (agent_1), model `test-model`", 2)
	say("Ev8", "1700000302.000100", thread, "follow all")
	expect(thread, "every reply in this thread", 3)
	// In "follow all", a plain thread reply (no mention) is a message for the agent.
	deliver(t, h, eventBody("Ev9", map[string]any{"type": "message", "user": "UHUMAN01", "text": "plain reply",
		"ts": "1700000303.000100", "thread_ts": thread, "channel": channel, "channel_type": "channel"}))
	expect(thread, "echo: plain reply", 4)
	say("Ev10", "1700000304.000100", thread, "follow mentions")
	expect(thread, "only take messages that mention", 5)
	deliver(t, h, eventBody("Ev11", map[string]any{"type": "message", "user": "UHUMAN01", "text": "ignored now",
		"ts": "1700000305.000100", "thread_ts": thread, "channel": channel}))
	say("Ev12", "1700000306.000100", thread, "archive")
	expect(thread, "Archiving workspace", 6)
	say("Ev13", "1700000307.000100", thread, "more work")
	expect(thread, "archived or has failed", 7)
	for _, p := range f.Posts() {
		if strings.Contains(p.Text, "ignored now") {
			t.Fatalf("expected a plain reply ignored after follow mentions, got %+v", p)
		}
	}
}

func TestRateLimitedPostsWaitAndChannelGoneStops(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, true)
	f.mu.Lock()
	f.failPost = func(w http.ResponseWriter, n int) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	f.mu.Unlock()
	const root = "1700000400.000100"
	start := time.Now()
	deliver(t, h, eventBody("EvRL", mention(root, "", "<@"+botUser+"> write limited")))
	f.waitPosts(t, root, "the reply after the 429", func(p []post) bool { return len(p) == 1 })
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("expected the post retried after Retry-After (1 s), came after %s", waited)
	}

	f.mu.Lock()
	f.failPost = func(w http.ResponseWriter, n int) bool {
		_, _ = w.Write([]byte(`{"ok":false,"error":"channel_not_found"}`))
		return true
	}
	f.mu.Unlock()
	const gone = "1700000500.000100"
	deliver(t, h, eventBody("EvGone", mention(gone, "", "<@"+botUser+"> write gone")))
	attempts := eventually.Value(t, 20*time.Second, "the reply to a gone channel given up", func() (int, error) {
		var status string
		var attempts int
		err := h.PG().DB().QueryRow(`SELECT d.status, d.attempts FROM chat_deliveries d JOIN chat_threads t ON t.id = d.thread_id
			WHERE t.thread_id = $1`, gone).Scan(&status, &attempts)
		if err == nil && status != "failed" {
			err = fmt.Errorf("status %q", status)
		}
		return attempts, err
	})
	if attempts != 1 {
		t.Fatalf("expected a permanent error to stop after 1 attempt, got %d", attempts)
	}
}

func TestAccountRefusalsAndServerErrorsRetried(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, true)
	ctx := context.Background()
	on, off := true, false
	cases := []struct {
		ts   string
		u    core.AccountUpdate
		want string
	}{
		{"1700000700.000100", core.AccountUpdate{BillingHold: &on}, "billing hold"},
		{"1700000701.000100", core.AccountUpdate{BillingHold: &off, Entitled: &off}, "doesn't have cloud workspaces enabled"},
	}
	for i, c := range cases {
		if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, c.u); err != nil {
			t.Fatal(err)
		}
		deliver(t, h, eventBody("EvAcct"+c.ts, mention(c.ts, "", "<@"+botUser+"> write x")))
		posts := f.waitPosts(t, c.ts, c.want, func(p []post) bool { return len(p) >= 1 })
		if !strings.Contains(posts[0].Text, c.want) {
			t.Fatalf("case %d: expected %q, got %q", i, c.want, posts[0].Text)
		}
	}
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{Entitled: &on}); err != nil {
		t.Fatal(err)
	}
	// Slack answers 503 twice: the reply is retried with backoff and posted once.
	f.failNextPosts(2, http.StatusServiceUnavailable)
	const root = "1700000800.000100"
	deliver(t, h, eventBody("Ev5xx", mention(root, "", "<@"+botUser+"> write retried")))
	start := time.Now()
	f.waitPosts(t, root, "the reply after two 503s", func(p []post) bool { return len(p) >= 1 })
	if waited := time.Since(start); waited < 2*time.Second {
		t.Fatalf("expected the retries to back off (2 s, then 4 s), the reply came after %s", waited)
	}
	waitThreadSettled(t, h, root)
	if posts := f.waitPosts(t, root, "", func([]post) bool { return true }); len(posts) != 1 || posts[0].Text != "wrote retried.txt" {
		t.Fatalf("expected the reply posted once after the 503s, got %+v", posts)
	}
	scrape := waitMetrics(t, h, `wshub_chat_posts_total{kind="reply",platform="slack",result="retrying"} 2`,
		`wshub_chat_posts_total{kind="reply",platform="slack",result="posted"} 1`,
		`wshub_chat_reply_latency_seconds_count{platform="slack"} 1`)
	// The latency is from the turn's end to the reply posted: two backoffs (2 s, 4 s)
	// long at least. Before created_at was read with the claim it was always 0.
	_, sum, _ := strings.Cut(scrape, `wshub_chat_reply_latency_seconds_sum{platform="slack"} `)
	sum, _, _ = strings.Cut(sum, "\n")
	if secs, err := strconv.ParseFloat(sum, 64); err != nil || secs < 2 || secs > 120 {
		t.Fatalf("expected the reply latency's sum between 2 s (two backoffs) and 2 minutes, got %q", sum)
	}
}
