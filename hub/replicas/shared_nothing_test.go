package replicas_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/s3test"
)

// Two hubs on one database, each with a data directory of its own (two hosts), behind
// a balancer that sends each of the runtime's calls to the next hub: the checkout, the
// long polls, the attachments, the commits and the reports of one remote workspace
// alternate between them. Messages, attachments and decisions are sent through both.
// Every turn is answered once and in order, every attachment reaches the agent, and
// every commit reaches the branch the hubs share and the project's repository. So with
// each blob store that replicas share.
func TestHubsWithNoSharedDiskServeOneRuntimeInTurn(t *testing.T) {
	t.Parallel()
	stores := []struct {
		name  string
		store func(t *testing.T) func(*hub.Config)
	}{
		{"postgres", func(*testing.T) func(*hub.Config) { return func(c *hub.Config) { c.Blobs = hub.BlobsPostgres } }},
		{"s3", func(t *testing.T) func(*hub.Config) { return s3Config(s3test.Start(t)) }},
	}
	for _, tt := range stores {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			oneRuntimeInTurn(t, tt.store(t))
		})
	}
}

func oneRuntimeInTurn(t *testing.T, blobs func(*hub.Config)) {
	balancer := hubtest.NewRoundRobin(t)
	a := hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) {
		blobs(c)
		c.RuntimeHubURL = balancer.URL
	}))
	b := a.ReplicaWith(t, func(c *hub.Config) { c.DataDir, c.HostID = t.TempDir(), "replica-b" })
	if err := balancer.SetTargets(a.URL, b.URL); err != nil {
		t.Fatal(err)
	}
	hubs := []*hubtest.Hub{a, b}
	// The project is prepared at a: b has no mirror of it until it needs one.
	p, upstream := hubtest.PushingProject(t, a)
	id := hubtest.CreateOn(t, b, "process", "write w0", "projectId", p.ID, "runtimeMode", "approval-required")
	events, drop := hubtest.Stream(t, a, id, "")
	defer drop()

	// Each reply starts so; a commit's goes on to say where it was pushed.
	want := []string{"completed: wrote w0.txt\n\n---\nPushed to "}
	for i := 1; i <= 6; i++ {
		h, other := hubs[i%2], hubs[(i+1)%2]
		switch i % 3 {
		case 0: // a file uploaded to one hub, sent from the other
			up := h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte(fmt.Sprintf("notes %d", i)),
				"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
			asset := up.Body["asset"].(map[string]any)["assetId"].(string)
			hubtest.Send(t, other, id, "attachments", "attachments", []string{asset})
			want = append(want, fmt.Sprintf("completed: .context/files/%s-notes.txt=notes %d", asset, i))
		case 1: // a commit
			hubtest.Send(t, h, id, fmt.Sprintf("write w%d", i))
			want = append(want, fmt.Sprintf("completed: wrote w%d.txt\n\n---\nPushed to ", i))
		case 2: // an approval asked through one hub, decided through the other
			hubtest.Send(t, h, id, fmt.Sprintf("ask q%d", i))
			asked, _ := hubtest.NextOf(t, events, "approval_requested")
			hubtest.Decide(t, other, id, asked.ApprovalID, "allow", 200, "")
			want = append(want, fmt.Sprintf(`completed: {"type":"approval_resolved","id":"q%d","decision":"allow"}`, i))
		}
		hubtest.WaitFor(t, a, id, "idle after the turn", hubtest.IdleAfterTurns(1+i))
	}
	got := hubtest.Replies(t, b, id)
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Fatalf("expected every turn answered once, in order, starting:\n%q\ngot:\n%q", want, got)
	}

	ws := hubtest.WaitFor(t, a, id, "idle", hubtest.IdleAfterTurns(len(want)))
	branch := ws["branch"].(string)
	for _, f := range []string{"w0", "w1", "w4"} {
		if got := hubtest.Git(t, upstream, "show", branch+":"+f+".txt"); got != f {
			t.Errorf("expected %s.txt pushed to the project's repository, got %q", f, got)
		}
	}
	var head string
	if err := a.PG().DB().Get(&head, `SELECT head FROM branch_copies WHERE workspace_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if up := hubtest.Git(t, upstream, "rev-parse", branch); head != up {
		t.Errorf("expected the shared branch at the pushed head %s, got %s", up, head)
	}
	served := balancer.Served()
	if served[strings.TrimPrefix(a.URL, "http://")] < 10 || served[strings.TrimPrefix(b.URL, "http://")] < 10 {
		t.Errorf("expected the runtime's calls spread over both hubs, got %v", served)
	}
	for _, h := range hubs {
		if _, err := os.Stat(filepath.Join(h.Config.DataDir, "assets")); !os.IsNotExist(err) {
			t.Errorf("expected no attachment on %s's disk, got %v", h.URL, err)
		}
	}
}
