package turns_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// Every message records who wrote it, and a turn's commit names the member behind a
// chat message as its co-author, on the hub's host and in a process runtime alike:
//   - a Slack user who linked their Slack identity by signing in is the member, and the
//     commit carries "Co-authored-by: Name <email>" beside the hub's own author;
//   - a Slack user the hub knows no member for is recorded by name, and the commit has no trailer;
//   - a message sent with an API key is authored by the key, by its name.
func TestMessagesHaveAuthorsAndCommitsNameTheMemberAsCoAuthor(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	ctx := context.Background()
	email, _ := core.NewIdentity(core.IdentityEmail, "ada@example.com")
	if _, err := h.Service.Admin.AddMember(ctx, h.Account.ID, email, core.RoleMember, "Ada Lovelace"); err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			team := "T" + strings.ToUpper(provider)
			// Ada signs in to the app with Slack: that links her Slack identity.
			slackID, _ := core.NewIdentity(core.IdentitySlack, team+":U1")
			if _, _, err := h.Service.App.SignIn(ctx, core.SignInInput{Identity: slackID, Email: "ada@example.com"}); err != nil {
				t.Fatal(err)
			}
			if err := h.Service.Admin.BindChat(ctx, &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
				AccountID: h.Account.ID, ProjectID: h.Project.ID, Agent: "agent_1", Model: "test-model", ProviderID: provider}); err != nil {
				t.Fatal(err)
			}
			place := core.ChatPlace{Platform: core.PlatformSlack, TeamID: team, ChannelID: "C1", ThreadID: "1.0"}
			sess, err := h.Service.Chat.ChatSessionFor(ctx, place)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := h.Service.Chat.StartFromChat(ctx, sess, core.ChatInput{Key: "slack:" + team + ":C1:1.0",
				Text: "write first", UserID: "U1", UserName: "ada"})
			if err != nil {
				t.Fatal(err)
			}
			repo := filepath.Join(h.Config.DataDir, "workspaces", ws.ID, "checkout")
			if provider == "process" {
				repo = filepath.Join(h.Config.DataDir, "branches", ws.ID+".git")
			}
			hubtest.WaitFor(t, h, ws.ID, "idle after one turn", hubtest.IdleAfterTurns(1))
			body := hubtest.Git(t, repo, "log", "-1", "--format=%an <%ae>%n%B", ws.Branch)
			if !strings.HasPrefix(body, "wshub <wshub@localhost>\n") || !strings.HasSuffix(strings.TrimSpace(body), "\n\nCo-authored-by: Ada Lovelace <ada@example.com>") {
				t.Errorf("expected the hub's commit with Ada as co-author, got %q", body)
			}

			// Someone the hub has no member for.
			if sess, err = h.Service.Chat.ChatSessionFor(ctx, place); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Service.Chat.SendFromChat(ctx, sess, core.ChatInput{Key: "slack:" + team + ":C1:2.0",
				Text: "write second", UserID: "U2", UserName: "Grace\n<b>"}); err != nil {
				t.Fatal(err)
			}
			hubtest.WaitFor(t, h, ws.ID, "idle after two turns", hubtest.IdleAfterTurns(2))
			if body := hubtest.Git(t, repo, "log", "-1", "--format=%B", ws.Branch); strings.Contains(body, "Co-authored-by") {
				t.Errorf("expected no co-author for a person who is no member, got %q", body)
			}

			hubtest.Send(t, h, ws.ID, "write third")
			hubtest.WaitFor(t, h, ws.ID, "idle after three turns", hubtest.IdleAfterTurns(3))
			r := h.Call("GET", "/v1/api/workspaces/"+ws.ID+"/messages", h.Key, nil).Expect(t, 200, "")
			var got []string
			for _, raw := range r.Body["messages"].([]any) {
				m := raw.(map[string]any)
				a, ok := m["author"].(map[string]any)
				if m["role"] == "assistant" {
					if ok {
						t.Errorf("expected no author on an agent's reply, got %v", a)
					}
					continue
				}
				got = append(got, a["kind"].(string)+" "+a["id"].(string)+" "+a["name"].(string))
			}
			want := []string{"slack U1 ada", "slack U2 Grace <b>", "api " + keyID(t, h) + " test"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("expected the authors %q, got %q", want, got)
			}
		})
	}
}

// keyID is the id of the hub's test key.
func keyID(t *testing.T, h *hubtest.Hub) string {
	t.Helper()
	keys, err := h.Service.Admin.ListAPIKeys(context.Background(), h.Account.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("expected the hub's one key, got %d (%v)", len(keys), err)
	}
	return keys[0].ID
}
