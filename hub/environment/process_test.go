package environment_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// On the process provider the runtime asks the hub for the setup over the runtime
// API, runs it in its own sandbox, relays its output, and says how it ended: the
// same workspace, events and failures as on the local provider.
func TestSetupRunsOnTheProcessProvider(t *testing.T) {
	t.Parallel()
	h := startHub(t, hubtest.WithProcessProvider(t))
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{
		"setup": "echo installing\nmkdir -p deps && echo ready > deps/installed\necho done >&2",
		"env": {"GREETING": "hello from the environment"},
		"cache": [{"paths": ["deps"]}]}`})
	id := create(t, h, p, `cat deps/installed; echo "$GREETING"; echo work > work.txt`, "providerId", "process")
	ws := waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if got := reply(t, h, id, 2); !strings.Contains(got, "ready") || !strings.Contains(got, "hello from the environment") {
		t.Errorf("the agent should find the setup's files and the environment's variables; it replied %q", got)
	}
	if got := setupOutput(events(t, h, id)); got != "installing\ndone\n" {
		t.Errorf("setup output %q", got)
	}
	if detail, _ := ws["statusDetail"].(string); detail != "" {
		t.Errorf("an environment that applied whole leaves no statusDetail: %q", detail)
	}
	// The turn's commit, as the machine's checkout holds it.
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "git show --name-only --format= HEAD"}).Expect(t, 200, "")
	waitFor(t, h, id, "the second turn done", idleAfterTurns(2))
	if got := reply(t, h, id, 4); got != "work.txt" {
		t.Errorf("the turn's commit should hold work.txt only, not the setup's files: %q", got)
	}
}

// A setup that fails on a remote machine fails the workspace in words, and the
// runtime stops.
func TestASetupFailingOnTheProcessProviderFailsTheWorkspace(t *testing.T) {
	t.Parallel()
	h := startHub(t, hubtest.WithProcessProvider(t))
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{"setup": "echo compiling\necho cc: not found >&2\nexit 127"}`})
	id := create(t, h, p, "echo never", "providerId", "process")
	ws := waitFor(t, h, id, "the workspace failed", state("failed"))
	detail, _ := ws["statusDetail"].(string)
	if ws["statusCode"] != "setup_failed:setup_script" || !strings.Contains(detail, "exited with status 127") ||
		!strings.Contains(detail, "compiling\ncc: not found") {
		t.Errorf("statusCode %v, statusDetail %q", ws["statusCode"], detail)
	}
	var ended []event
	for _, e := range events(t, h, id) {
		if e.Type == "setup_finished" {
			ended = append(ended, e)
		}
	}
	if len(ended) != 1 || ended[0].Outcome != "error" || !strings.Contains(ended[0].Reason, "exited with status 127") {
		t.Errorf("one setup_finished saying why: %+v", ended)
	}
}

// A remote machine gets the project's secrets over the runtime API: setup all of
// them, the agent those marked for it, and what either prints is masked.
func TestSecretsReachARemoteMachineAndAreMasked(t *testing.T) {
	t.Parallel()
	h := startHub(t, hubtest.WithProcessProvider(t))
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{
		"setup": "echo \"setup sees $REGISTRY_TOKEN and $MODEL_KEY\"\n[ -n \"$REGISTRY_TOKEN\" ] && echo has > setup-had-token"}`})
	ctx := context.Background()
	for _, s := range []core.ProjectSecretInput{
		{ProjectID: p.ID, Name: "REGISTRY_TOKEN", Value: "npm_setup_only_51f0c2"},
		{ProjectID: p.ID, Name: "MODEL_KEY", Value: "sk-agent-9e44d1", Agent: true},
	} {
		if _, err := h.Service.ProjectSecrets.Set(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	id := create(t, h, p, `cat setup-had-token; echo "agent: [$REGISTRY_TOKEN] [$MODEL_KEY]"`, "providerId", "process")
	waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if got := setupOutput(events(t, h, id)); got != "setup sees **** and ****\n" {
		t.Errorf("the setup's output, its secrets masked: %q", got)
	}
	if got := reply(t, h, id, 2); got != "has\nagent: [] [****]" {
		t.Errorf("the agent gets the secret marked for it only, masked in its reply: %q", got)
	}
}
