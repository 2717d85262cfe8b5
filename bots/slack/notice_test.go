package slack_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

func TestWorkspaceFailureIsAnnouncedInTheThread(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, true)
	// The project's mirror and its repository disappear while the project is still
	// ready: the workspace is created, and its checkout fails.
	for _, dir := range []string{h.Project.MirrorPath, h.Project.Repository} { // nothing to clone it again from
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	const root = "1700000900.000100"
	deliver(t, h, eventBody("EvFail1", mention(root, "", "<@"+botUser+"> write doomed")))
	posts := f.waitPosts(t, root, "the failure notice", func(p []post) bool { return len(p) >= 1 })
	list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
	if len(list) != 1 {
		t.Fatalf("expected the workspace in the API, got %d", len(list))
	}
	ws := list[0].(map[string]any)
	if ws["state"] != "failed" {
		t.Fatalf("expected the workspace failed, got %v", ws["state"])
	}
	want := "Workspace `" + ws["workspaceId"].(string) + "` failed (its checkout could not be set up)"
	if !strings.Contains(posts[0].Text, want) || !strings.Contains(posts[0].Text, "Start a new thread") {
		t.Fatalf("expected the thread told %q and to start a new thread, got %q", want, posts[0].Text)
	}
	if posts[0].Channel != channel {
		t.Fatalf("expected the notice in %s, got %s", channel, posts[0].Channel)
	}

	// The thread's next mention is refused in words; the failure is not told again.
	deliver(t, h, eventBody("EvFail2", mention("1700000901.000100", root, "<@"+botUser+"> are you there")))
	f.waitPosts(t, root, "the refusal", func(p []post) bool { return len(p) >= 2 })
	waitThreadSettled(t, h, root)
	posts = f.waitPosts(t, root, "", func([]post) bool { return true })
	if len(posts) != 2 || !strings.Contains(posts[1].Text, "archived or has failed") {
		t.Fatalf("expected exactly the notice and one refusal, got %+v", posts)
	}
}

func TestARefusalIsSaidOnceWhenSlackFailsToTakeIt(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, false) // not bound: every mention is refused
	f.failNextPosts(2, http.StatusServiceUnavailable)
	const root = "1700001000.000100"
	deliver(t, h, eventBody("EvOnce", mention(root, "", "<@"+botUser+"> write x")))
	f.waitPosts(t, root, "the refusal after two 503s", func(p []post) bool { return len(p) >= 1 })
	waitThreadSettled(t, h, root)
	posts := f.waitPosts(t, root, "", func([]post) bool { return true })
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "isn't connected to a wshub account") {
		t.Fatalf("expected the refusal posted once, got %+v", posts)
	}
	// The event was handled once; only the post was retried.
	var inboxAttempts, noticeAttempts int
	var inboxStatus, noticeStatus string
	db := h.PG().DB()
	if err := db.QueryRow(`SELECT status, attempts FROM chat_inbox WHERE event_id = 'EvOnce'`).Scan(&inboxStatus, &inboxAttempts); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT status, attempts FROM chat_notices WHERE notice_key = 'EvOnce:0'`).Scan(&noticeStatus, &noticeAttempts); err != nil {
		t.Fatal(err)
	}
	if inboxStatus != "done" || inboxAttempts != 1 || noticeStatus != "delivered" || noticeAttempts != 3 {
		t.Fatalf("expected the event handled once (done, 1) and the notice posted on its third try (delivered, 3), got (%s, %d) and (%s, %d)",
			inboxStatus, inboxAttempts, noticeStatus, noticeAttempts)
	}
	waitMetrics(t, h, `wshub_chat_events_total{platform="slack",result="handled"} 1`,
		`wshub_chat_posts_total{kind="notice",platform="slack",result="retrying"} 2`,
		`wshub_chat_posts_total{kind="notice",platform="slack",result="posted"} 1`)
	var sealed []byte
	if err := db.QueryRow(`SELECT text_sealed FROM chat_notices WHERE notice_key = 'EvOnce:0'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "connected") {
		t.Fatalf("expected the notice's text sealed at rest, got %q", sealed)
	}
}

// A binding's --provider is where the workspaces its threads start run.
func TestABindingsProviderIsWhereItsWorkspacesRun(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, false, hubtest.WithProcessProvider(t))
	if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
		AccountID: h.Account.ID, Agent: "agent_1", Model: "test-model", ProviderID: "process"}); err != nil {
		t.Fatal(err)
	}
	deliver(t, h, eventBody("EvProv1", mention("1700000950.000100", "", "<@"+botUser+"> write here")))
	var list []any
	eventually.Eventually(t, time.Minute, "a workspace started from the thread", func() bool {
		list = h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
		return len(list) == 1
	})
	if got := list[0].(map[string]any)["providerId"]; got != "process" {
		t.Fatalf("expected the workspace on the binding's provider, got %v", got)
	}
}
