package secrets_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The two secrets of these tests: one for setup only, one for the agent too.
const (
	setupOnly = "setup-only-secret-4f1c9e"
	agentToo  = "agent-secret-7d2b80"
)

// sha is what a script prints of a secret it got: its hash, which no masking hides,
// proves the value arrived.
func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// setupScript prints what it got of each secret, and then both values themselves.
const setupScript = `echo "setup-only sha $(printf %s "$SETUP_ONLY" | sha256sum | cut -c1-64)"
echo "agent-too sha $(printf %s "$AGENT_TOO" | sha256sum | cut -c1-64)"
echo "printed: [$SETUP_ONLY] [$AGENT_TOO]"
printf '%03990d%s\n' 0 "$SETUP_ONLY"`

// agentCommand is the turn's agent (command-agent protocol): it says what it got, in a
// turn event and in its reply.
const agentCommand = `cat >/dev/null
printf '{"type":"text","delta":"event: %s"}\n' "$AGENT_TOO" >&"$WSHUB_EVENTS_FD"
printf '{"type":"tool_started","tool":"bash","summary":"%0290d%s"}\n' 0 "$AGENT_TOO" >&"$WSHUB_EVENTS_FD"
echo "setup-only=[$SETUP_ONLY] agent-too=[$AGENT_TOO] sha $(printf %s "$AGENT_TOO" | sha256sum | cut -c1-64)"`

// start runs a hub whose project's repository declares the setup script on main and
// on the branch feature, with the two secrets set.
func start(t *testing.T, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithJobs(),
		hubtest.WithAgentCommands(map[string]string{"agent_1": agentCommand, "agent_2": askingAgent})}, opts...)...)
	repo := hubtest.GitRepo(t)
	env, err := json.Marshal(map[string]any{"setup": setupScript})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".wshub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".wshub", "environment.json"), env, 0o644); err != nil {
		t.Fatal(err)
	}
	hubtest.Git(t, repo, "add", ".")
	hubtest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "environment")
	hubtest.Git(t, repo, "branch", "feature")
	h.Project = h.NewProject(h.Account.ID, repo)
	h.SetProjectNetwork(core.NetworkNone) // nothing here needs one; starting it costs time
	ctx := context.Background()
	for _, s := range []core.ProjectSecretInput{
		{ProjectID: h.Project.ID, Name: "SETUP_ONLY", Value: setupOnly},
		{ProjectID: h.Project.ID, Name: "AGENT_TOO", Value: agentToo, Agent: true},
	} {
		if _, err := h.Service.ProjectSecrets.Set(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// create makes a workspace of the hub's project on base with a first prompt, its
// other fields from extra.
func create(t *testing.T, h *hubtest.Hub, base string, extra ...string) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "m", "projectId": h.Project.ID, "baseRef": base, "prompt": "go"}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i]] = extra[i+1]
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["workspaceId"].(string)
}

// waitIdle waits until the workspace's first turn is recorded (or it failed).
func waitIdle(t *testing.T, h *hubtest.Hub, id string) map[string]any {
	t.Helper()
	return eventually.Value(t, time.Minute, "workspace "+id+"'s first turn", func() (map[string]any, error) {
		ws := h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil).Expect(t, 200, "").Body["workspace"].(map[string]any)
		if ws["state"] == "failed" || ws["agentStatus"] == "idle" && ws["latestSeq"] == float64(2) {
			return ws, nil
		}
		return nil, fmt.Errorf("last seen %v", ws)
	})
}

// eventsOf lists the workspace's events.
func eventsOf(t *testing.T, h *hubtest.Hub, id string) []*core.TurnEvent {
	t.Helper()
	list, err := h.Service.Workspaces.ListTurnEvents(context.Background(), h.Account, id, 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// setupLines and turnTexts are what the workspace's events say: the setup's output
// lines, and the turn's text deltas and tool summaries.
func events(t *testing.T, h *hubtest.Hub, id string) (setupLines, turnTexts []string) {
	t.Helper()
	for _, e := range eventsOf(t, h, id) {
		switch e.Type {
		case core.EventSetupOutput:
			setupLines = append(setupLines, strings.TrimSuffix(e.Delta, "\n"))
		case core.EventText:
			turnTexts = append(turnTexts, e.Delta)
		case core.EventToolStarted:
			turnTexts = append(turnTexts, e.Summary)
		}
	}
	return setupLines, turnTexts
}

// reply is the workspace's first assistant message.
func reply(t *testing.T, h *hubtest.Hub, id string) string {
	t.Helper()
	r := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	for _, m := range r.Body["messages"].([]any) {
		if m := m.(map[string]any); m["role"] == "assistant" {
			return m["text"].(string)
		}
	}
	t.Fatalf("workspace %s has no reply: %v", id, r.Body)
	return ""
}

// setUpOn creates a workspace on base, waits for its first turn, and checks that its
// setup printed want.
func setUpOn(t *testing.T, h *hubtest.Hub, base string, want ...string) string {
	t.Helper()
	id := create(t, h, base)
	if ws := waitIdle(t, h, id); ws["state"] != "ready" {
		t.Fatalf("expected the workspace ready after its turn, got %v", ws)
	}
	if setup, _ := events(t, h, id); strings.Join(setup, "\n") != strings.Join(want, "\n") {
		t.Errorf("expected the setup on %s to print:\n%s\ngot:\n%s", base, strings.Join(want, "\n"), strings.Join(setup, "\n"))
	}
	return id
}

// A workspace on the default branch: its setup gets both secrets, its agent only the
// one marked for it; each value the setup or the agent prints is stored as ****.
func TestSetupGetsEverySecretAndTheAgentOnlyItsOwn(t *testing.T) {
	t.Parallel()
	h := start(t)
	// The last line would be cut at 4,000 characters inside the value: masked first, it
	// is not, and no head of the value shows.
	id := setUpOn(t, h, "main", "setup-only sha "+sha(setupOnly), "agent-too sha "+sha(agentToo), "printed: [****] [****]",
		strings.Repeat("0", 3990)+"****")
	if got, want := reply(t, h, id), "setup-only=[] agent-too=[****] sha "+sha(agentToo); !strings.HasPrefix(got, want) {
		t.Errorf("expected the agent to get only its secret, masked in the reply: %q, got %q", want, got)
	}
	// The summary would be cut at 300 characters inside the value: masked first, it is
	// not, and no head of the value shows.
	if _, texts := events(t, h, id); len(texts) != 2 || texts[0] != "event: ****" || texts[1] != strings.Repeat("0", 290)+"****" {
		t.Errorf("expected the turn's text and tool events masked, got %q", texts)
	}
	assertNowhere(t, h)
}

// A workspace based on another branch (a member chose it, and so its setup script)
// gets no setup-only secret in its setup; the agent's still.
func TestSetupFromAnotherBaseGetsNoSetupOnlySecret(t *testing.T) {
	t.Parallel()
	h := start(t)
	setUpOn(t, h, "feature", "setup-only sha "+sha(""), "agent-too sha "+sha(agentToo), "printed: [] [****]", strings.Repeat("0", 3990))
	assertNowhere(t, h)
}

// assertNowhere checks that no value reached the database in the clear: every text
// column of every table (sealed columns are bytes, and hold the values sealed).
func assertNowhere(t *testing.T, h *hubtest.Hub) {
	t.Helper()
	var tables []string
	if err := h.PG().DB().Select(&tables, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		var n int
		if err := h.PG().DB().Get(&n, `SELECT count(*) FROM `+table+` t WHERE t::text LIKE '%' || $1 || '%' OR t::text LIKE '%' || $2 || '%'`,
			setupOnly, agentToo); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("table %s holds a secret's value in the clear", table)
		}
	}
}

// askingAgent asks twice for approval: a step whose description names the agent's
// secret (its input only the variable), then one whose input holds the value.
const askingAgent = `cat >/dev/null
printf '{"type":"approval_requested","id":"one","tool":"Bash","summary":"deploy with %s","input":{"command":"deploy --token $AGENT_TOO"}}\n' "$AGENT_TOO" >&"$WSHUB_EVENTS_FD"
read -r a <&"$WSHUB_DECISIONS_FD"; echo "$a"
printf '{"type":"approval_requested","id":"two","tool":"Bash","summary":"upload","input":{"command":"upload --token %s"}}\n' "$AGENT_TOO" >&"$WSHUB_EVENTS_FD"
read -r a <&"$WSHUB_DECISIONS_FD"; echo "$a"`

// What an agent asks to be approved is shown with the secrets masked, and an ask
// whose input holds a secret's value, which could not be shown whole, is denied
// without asking anyone.
func TestApprovalAsksShowNoSecret(t *testing.T) {
	t.Parallel()
	h := start(t)
	id := create(t, h, "main", "agent", "agent_2", "runtimeMode", core.ModeApprovalRequired)
	ask := waitAsk(t, h, id)
	h.Call("POST", "/v1/api/workspaces/"+id+"/approvals/"+ask.ApprovalID, h.Key, map[string]any{"decision": "allow"}).Expect(t, 200, "")
	if ws := waitIdle(t, h, id); ws["state"] != "ready" {
		t.Fatalf("expected the workspace ready after its turn, got %v", ws)
	}
	lines := strings.Split(reply(t, h, id), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], `"decision":"allow"`) || !strings.Contains(lines[1], `"decision":"deny"`) ||
		!strings.Contains(lines[1], "holds the value of one of the project's secrets") {
		t.Fatalf("expected the first ask allowed and the second denied for its secret, got %q", lines)
	}
	assertDeniedForTheSecret(t, h, id)
}

// The same across the runtime API, for a remote runtime's turn (the test speaks for
// the runtime).
func TestRemoteApprovalAsksShowNoSecret(t *testing.T) {
	t.Parallel()
	h := start(t, hubtest.WithFakeMachine(t))
	id := create(t, h, "main", "providerId", "process", "runtimeMode", core.ModeApprovalRequired)
	token := h.MachineToken(t, id)
	call := func(path string, body any) map[string]any {
		t.Helper()
		return h.Call("POST", "/internal/runtime/v1"+path, token, body, "X-Wshub-Runtime-Session", "session-0001").Expect(t, 200, "").Body
	}
	call("/hello", nil)
	h.Call("POST", "/internal/runtime/v1/ready", token, nil, "X-Wshub-Runtime-Session", "session-0001").Expect(t, 204, "")
	turn := call("/next", map[string]any{"waitSeconds": 0})["turnId"].(string)
	first := call("/turns/"+turn+"/approvals", map[string]any{"key": "one", "tool": "Bash", "summary": "deploy with " + agentToo,
		"input": map[string]any{"command": "deploy --token $AGENT_TOO"}, "waitSeconds": 0})
	if first["status"] != "pending" {
		t.Fatalf("expected the first ask pending, got %v", first)
	}
	waitAsk(t, h, id)
	second := call("/turns/"+turn+"/approvals", map[string]any{"key": "two", "tool": "Bash", "summary": "upload",
		"input": map[string]any{"command": "upload --token " + agentToo}, "waitSeconds": 0})
	if second["status"] != "denied" || !strings.Contains(second["reason"].(string), "holds the value of one of the project's secrets") {
		t.Fatalf("expected the second ask denied for its secret, got %v", second)
	}
	assertDeniedForTheSecret(t, h, id)
}

// waitAsk waits for the workspace's first approval_requested event and checks that
// its description is masked and its input whole.
func waitAsk(t *testing.T, h *hubtest.Hub, id string) *core.TurnEvent {
	t.Helper()
	ask := eventually.Value(t, time.Minute, "the agent's ask", func() (*core.TurnEvent, error) {
		for _, e := range eventsOf(t, h, id) {
			if e.Type == core.EventApprovalRequested {
				return e, nil
			}
		}
		return nil, errors.New("no approval_requested event")
	})
	if ask.Summary != "deploy with ****" || string(ask.Input) != `{"command":"deploy --token $AGENT_TOO"}` {
		t.Fatalf("expected the ask's description masked and its input whole, got %q %s", ask.Summary, ask.Input)
	}
	return ask
}

// assertDeniedForTheSecret checks that the ask holding the value was denied by the
// hub, and that no event or row shows the value.
func assertDeniedForTheSecret(t *testing.T, h *hubtest.Hub, id string) {
	t.Helper()
	var denied bool
	for _, e := range eventsOf(t, h, id) {
		denied = denied || e.Type == core.EventApprovalResolved && e.DecidedBy == "hub:secret"
		if strings.Contains(string(e.Input), agentToo) || strings.Contains(e.Summary, agentToo) {
			t.Errorf("event %s shows the secret: %q %s", e.Type, e.Summary, e.Input)
		}
	}
	if !denied {
		t.Error("expected the ask holding the secret resolved by hub:secret")
	}
	assertNowhere(t, h)
}

// A secret's value is sealed bound to its project and name: copied under another
// name, it does not open, and the workspace's setup fails in words rather than run
// without it.
func TestASecretCopiedUnderAnotherNameDoesNotOpen(t *testing.T) {
	t.Parallel()
	h := start(t)
	if _, err := h.PG().DB().Exec(`INSERT INTO project_secrets (project_id, name, value_sealed, agent, created_at, updated_at)
		SELECT project_id, 'COPIED', value_sealed, agent, created_at, updated_at FROM project_secrets WHERE name = 'AGENT_TOO'`); err != nil {
		t.Fatal(err)
	}
	id := create(t, h, "main")
	ws := waitIdle(t, h, id)
	if ws["state"] != "failed" || ws["statusCode"] != "setup_failed:environment_invalid" ||
		!strings.Contains(ws["statusDetail"].(string), "secret COPIED could not be opened") {
		t.Fatalf("expected the setup failed for the secret that does not open, got %v", ws)
	}
}

// A project holds at most core.MaxProjectSecrets secrets; at the cap one is still
// replaced, and a removal makes room.
func TestAProjectHoldsAtMostItsCapOfSecrets(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	set := func(name string) error {
		_, err := h.Service.ProjectSecrets.Set(ctx, core.ProjectSecretInput{ProjectID: h.Project.ID, Name: name, Value: "value of " + name})
		return err
	}
	for i := range core.MaxProjectSecrets {
		if err := set(fmt.Sprintf("S%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var ce *core.Error
	if err := set("ONE_MORE"); !errors.As(err, &ce) || ce.Code != core.CodeQuotaExceeded || !strings.Contains(ce.Detail, "at most 100 secrets") {
		t.Fatalf("expected the 101st secret refused in words, got %v", err)
	}
	if err := set("S000"); err != nil {
		t.Fatalf("expected a secret replaced at the cap, got %v", err)
	}
	if err := h.Service.ProjectSecrets.Remove(ctx, h.Project.ID, "S001"); err != nil {
		t.Fatal(err)
	}
	if err := set("ONE_MORE"); err != nil {
		t.Fatalf("expected room after a removal, got %v", err)
	}
}
