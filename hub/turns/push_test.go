package turns_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

func TestPushResultsReachTheReply(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		refuse  bool
		note    string
		pushed  bool
		counter string
	}{
		{"accepted", false, "Pushed to `", true, `wshub_pushes_total{result="pushed"}`},
		{"refused by a pre-receive hook", true, "refused: protected: pushes to this repository need review", false, `wshub_pushes_total{result="refused"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: hubtest.HostedRepository(t, tt.refuse), Push: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
				t.Fatalf("expected the hosted project ready, got %s %v %s", p.State, err, p.FailureReason)
			}
			rc := hubtest.NewReceiver(t, nil)
			hookID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
			defer h.Call("DELETE", "/v1/api/webhooks/"+hookID, h.Key, nil)
			r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m", "prompt": "write result"}).Expect(t, 201, "")
			id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
			ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
			msgs, _ := hubtest.Messages(t, h, id)
			if !strings.Contains(msgs[1].Text, tt.note) || msgs[1].Outcome != "completed" {
				t.Errorf("expected the reply to say %q, got %q (%s)", tt.note, msgs[1].Text, msgs[1].Outcome)
			}
			if sha, _ := ws["headCommit"].(string); len(sha) != 40 || ws["pushed"] != tt.pushed {
				t.Errorf("expected headCommit (40 hex) and pushed %v in the status, got %v, %v", tt.pushed, ws["headCommit"], ws["pushed"])
			}
			// The webhook event carries both too (extensions of api.md's event).
			ev := rc.Wait(t, 1)[0].Event
			if ev.HeadCommit != ws["headCommit"] || ev.Pushed == nil || *ev.Pushed != tt.pushed {
				t.Errorf("expected the event's headCommit %v and pushed %v, got %q, %v", ws["headCommit"], tt.pushed, ev.HeadCommit, ev.Pushed)
			}
			if m := scrape(t, h.MetricsURL); !strings.Contains(m, tt.counter+" 1\n") {
				t.Errorf("expected %s 1 in /metrics", tt.counter)
			}
		})
	}
}
