package webhooks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// sealedInDB opens every sealed value the hub keeps with only key, each with the
// binding its row must have (written out here, independently of core), and returns
// how many it opened. It fails the test on a value that does not open.
func sealedInDB(t *testing.T, h *hubtest.Hub, key string) int {
	t.Helper()
	s, err := seal.FromBase64(key)
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string]string{
		"message text":    `SELECT 'message:' || workspace_id || ':' || id, text_sealed FROM messages`,
		"message failure": `SELECT 'failure:' || workspace_id || ':' || id, failure_sealed FROM messages WHERE failure_sealed IS NOT NULL`,
		"webhook secret":  `SELECT 'webhook:' || account_id || ':' || id, secret_sealed FROM webhooks`,
		"event body":      `SELECT 'event:' || account_id || ':' || id, body_sealed FROM events`,
		"chat event":      `SELECT 'chatevent:' || platform || ':' || event_id, payload_sealed FROM chat_inbox`,
		"project secret":  `SELECT 'project-secret:' || project_id || ':' || name, value_sealed FROM project_secrets`,
	}
	opened := 0
	for what, q := range queries {
		rows, err := h.PG().DB().Query(q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for rows.Next() {
			var binding string
			var sealed []byte
			if err := rows.Scan(&binding, &sealed); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Open(sealed, binding); err != nil {
				t.Fatalf("%s %s does not open under the current key alone: %v", what, binding, err)
			}
			if !s.Current(sealed) {
				t.Fatalf("%s %s opens but is not marked with the current key", what, binding)
			}
			opened++
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := h.PG().DB().Query(`SELECT workspace_id, id, blob_key FROM assets`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ws, id, blobKey string
		if err := rows.Scan(&ws, &id, &blobKey); err != nil {
			t.Fatal(err)
		}
		sealed, err := os.ReadFile(filepath.Join(h.Config.DataDir, "assets", filepath.FromSlash(blobKey)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Open(sealed, "asset:"+ws+":"+id); err != nil {
			t.Fatalf("asset %s does not open under the current key alone: %v", id, err)
		}
		opened++
	}
	return opened
}

// The rotation an operator follows (docs/operations.md): seal under key 1; run with
// "key 2, key 1"; everything still reads and new values seal under key 2; reseal; drop
// key 1; everything still reads.
func TestContentKeyRotation(t *testing.T) {
	t.Parallel()
	k1, k2 := hubtest.NewContentKey(t), hubtest.NewContentKey(t)
	h := hubtest.StartDelivering(t, hubtest.WithConfig(func(c *hub.Config) { c.ContentKey = k1 }))
	rc := hubtest.NewReceiver(t, nil)
	hubtest.AddWebhook(t, h, h.Key, rc.URL)
	id := hubtest.CreateWorkspace(t, h, "hello")
	up := h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("notes under key 1"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	assetID := up.Body["asset"].(map[string]any)["assetId"].(string)
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "attachments", "attachments": []string{assetID}}).Expect(t, 200, "")
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "fail please"}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "three turns", hubtest.IdleAfterTurns(3))
	rc.Wait(t, 3)
	if _, err := h.Service.Chat.AcceptChatEvent(context.Background(), core.ChatArrival{Platform: "test", EventID: "ev-1", ThreadKey: "thread-1", Payload: []byte(`{"text":"hi"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.ProjectSecrets.Set(context.Background(), core.ProjectSecretInput{ProjectID: h.Project.ID, Name: "TOKEN", Value: "sealed under key 1"}); err != nil {
		t.Fatal(err)
	}
	before, _ := hubtest.Messages(t, h, id)

	// Rotating: key 2 seals, key 1 still opens.
	rotating := h.Beside(t, func(c *hub.Config) { c.ContentKey, c.ContentKeys = "", k2+","+k1 })
	during, tf := hubtest.Messages(t, rotating, id)
	if len(during) != 6 || during[0].Text != "hello" || during[3].Text != before[3].Text || tf == nil ||
		!strings.Contains(tf["message"].(string), "tripped over something") {
		t.Fatalf("expected the six key-1 messages and the failure readable during rotation, got %+v %v", during, tf)
	}
	// A new value seals under key 2. (Not a message: the key-1 hub's worker would run
	// its turn, as a hub left out of the rotation's first step would.)
	hubtest.AddWebhook(t, rotating, rotating.Key, rc.URL+"/second")

	var counts []core.ResealProgress
	if err := rotating.Service.Admin.Reseal(context.Background(), 2, func(p core.ResealProgress) { counts = append(counts, p) }); err != nil {
		t.Fatalf("reseal: %v (%+v)", err, counts)
	}
	total := 0
	for _, p := range counts {
		if p.Failed != 0 || p.Changed != 0 || p.Scanned != p.Resealed+p.Current {
			t.Fatalf("reseal %s: expected every value moved, got %+v", p.Kind, p)
		}
		total += p.Resealed
		if p.Kind == core.SealedWebhookSecret && (p.Scanned != 2 || p.Current != 1) {
			t.Fatalf("webhook secrets: expected 2 scanned, 1 already under key 2, got %+v", p)
		}
	}
	// 6 key-1 texts, 1 failure, 1 webhook secret, 3 event bodies, 1 chat event, 3 turn
	// events (each turn's turn_finished), 1 project secret, 1 asset, 1 workspace title.
	if total != 18 {
		t.Fatalf("expected 18 values resealed, got %d: %+v", total, counts)
	}
	counts = nil
	if err := rotating.Service.Admin.Reseal(context.Background(), 500, func(p core.ResealProgress) { counts = append(counts, p) }); err != nil {
		t.Fatal(err)
	}
	for _, p := range counts {
		if p.Resealed != 0 || p.Current != p.Scanned {
			t.Fatalf("second reseal %s: expected everything already current, got %+v", p.Kind, p)
		}
	}

	// Key 1 dropped: every value opens with key 2 alone, through the API too.
	if n := sealedInDB(t, h, k2); n != 15 {
		t.Fatalf("expected 15 sealed values under key 2, opened %d", n)
	}
	after := h.Beside(t, func(c *hub.Config) { c.ContentKey = k2 })
	got, tf := hubtest.Messages(t, after, id)
	if len(got) != 6 || got[0].Text != "hello" || got[3].Text != before[3].Text || tf == nil {
		t.Fatalf("expected all six messages readable with key 2 alone, got %+v %v", got, tf)
	}
	// A hub that never had key 2 cannot read what it sealed, and says so.
	stale := h.Beside(t, func(c *hub.Config) { c.ContentKey = k1 })
	if r := stale.Call("GET", "/v1/api/workspaces/"+id+"/messages", stale.Key, nil); r.Status != 500 {
		t.Fatalf("expected a hub with only key 1 to fail reading key-2 messages, got %d %s", r.Status, r.Raw)
	}
}

// A value sealed under a key the hub no longer holds is reported, not fatal: every
// other value still moves.
func TestResealReportsWhatDoesNotOpen(t *testing.T) {
	t.Parallel()
	k1, k2, k3 := hubtest.NewContentKey(t), hubtest.NewContentKey(t), hubtest.NewContentKey(t)
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.ContentKey = k1 }))
	id := hubtest.CreateWorkspace(t, h, "")
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "one"}).Expect(t, 200, "")
	other := h.Beside(t, func(c *hub.Config) { c.ContentKey = k3 })
	other.Call("POST", "/v1/api/workspaces/"+id+"/messages", other.Key, map[string]any{"text": "two"}).Expect(t, 200, "")

	rotating := h.Beside(t, func(c *hub.Config) { c.ContentKeys = k2 + " " + k1; c.ContentKey = "" })
	var texts core.ResealProgress
	err := rotating.Service.Admin.Reseal(context.Background(), 10, func(p core.ResealProgress) {
		if p.Kind == core.SealedMessageText {
			texts = p
		}
	})
	if !errors.Is(err, core.ErrResealIncomplete) {
		t.Fatalf("expected ErrResealIncomplete, got %v", err)
	}
	if texts.Scanned != 2 || texts.Resealed != 1 || texts.Failed != 1 || len(texts.Errors) != 1 ||
		!strings.Contains(texts.Errors[0], "does not hold") {
		t.Fatalf("expected one text resealed and one reported, got %+v", texts)
	}
}
