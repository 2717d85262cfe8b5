package environment_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// The setup runs once, after checkout and before the first turn, in the workspace's
// sandbox: what it installs is there for the agent, its variables reach every turn,
// its output is events people can read in order, and nothing it wrote is committed.
func TestSetupRunsBeforeTheFirstTurnAndIsWatched(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{
		"setup": "echo installing dependencies\nmkdir -p deps && echo ready > deps/installed\necho \"greeting is $GREETING\" > setup.log\necho to stderr >&2\necho done installing",
		"env": {"GREETING": "hello from the environment"}}`})
	id := create(t, h, p, `cat deps/installed; echo "$GREETING"; echo work > work.txt`)
	ws := waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if ws["statusDetail"] != nil && ws["statusDetail"] != "" {
		t.Errorf("a setup that applied whole leaves no statusDetail: %v", ws["statusDetail"])
	}
	if got := reply(t, h, id, 2); !strings.Contains(got, "ready") || !strings.Contains(got, "hello from the environment") {
		t.Errorf("the agent should find the setup's files and the environment's variables; it replied %q", got)
	}
	evs := events(t, h, id)
	out := setupOutput(evs)
	if out != "installing dependencies\nto stderr\ndone installing\n" {
		t.Errorf("setup output, both streams in order: %q", out)
	}
	var finished, firstTurnEvent int64
	for _, e := range evs {
		switch {
		case e.Type == "setup_finished":
			finished = e.Seq
			if e.Outcome != "completed" || !strings.HasPrefix(e.TurnID, "setup_") || e.Tool != "" && e.Tool != "setup" {
				t.Errorf("setup_finished: %+v", e)
			}
		case e.Type == "setup_output" && !strings.HasPrefix(e.TurnID, "setup_"):
			t.Errorf("setup output under turn %q", e.TurnID)
		case !strings.HasPrefix(e.Type, "setup_") && firstTurnEvent == 0:
			firstTurnEvent = e.Seq
		}
	}
	if finished == 0 || firstTurnEvent != 0 && firstTurnEvent < finished {
		t.Errorf("setup_finished (seq %d) must come before the turn's events (first at %d): %+v", finished, firstTurnEvent, evs)
	}
	// The turn's commit holds the agent's work, not what setup wrote.
	files := strings.Fields(hubtest.Git(t, checkoutOf(t, h, id), "show", "--name-only", "--format=", "HEAD"))
	if strings.Join(files, ",") != "work.txt" {
		t.Errorf("the turn's commit should hold work.txt only, not the setup's files: %v", files)
	}
}

// checkoutOf is a local workspace's checkout on the host.
func checkoutOf(t *testing.T, h *hubtest.Hub, id string) string {
	t.Helper()
	w, err := h.PG().GetWorkspaceByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return w.CheckoutPath
}

// A setup that fails, or runs out of time, fails the workspace in words, with the last
// lines it printed; the first message is failed with it, not left waiting.
func TestSetupFailureFailsTheWorkspaceInWords(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	for _, c := range []struct {
		name, env, code string
		detail          []string
	}{
		{"exit", `{"setup": "echo step one\necho the registry said no >&2\nexit 7"}`, "setup_failed:setup_script",
			[]string{".wshub/environment.json", "exited with status 7", "step one\nthe registry said no"}},
		// The timeout counts from the sandbox's start: 5 s leaves a busy machine room to
		// start it and run the echo (1 s did not, once, in CI).
		{"timeout", `{"setup": "echo waiting forever\nsleep 600", "setupTimeout": 5}`, "setup_failed:setup_timeout",
			[]string{"ran longer than its 5s", "waiting forever"}},
		{"invalid", `{"setpu": "npm ci"}`, "setup_failed:environment_invalid",
			[]string{`.wshub/environment.json is not a valid environment: unknown field "setpu"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": c.env})
			id := create(t, h, p, "echo never runs")
			ws := waitFor(t, h, id, "the workspace failed", state("failed"))
			detail, _ := ws["statusDetail"].(string)
			if ws["statusCode"] != c.code {
				t.Errorf("statusCode %v, want %s", ws["statusCode"], c.code)
			}
			for _, want := range c.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("statusDetail should say %q: %q", want, detail)
				}
			}
			msgs := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
			first := msgs.Body["messages"].([]any)[0].(map[string]any)
			if first["status"] != "failed" {
				t.Errorf("the first message should be failed with the workspace: %v", first)
			}
		})
	}
}

// A devcontainer file with comments and trailing commas is read for what the hub
// honours; what it does not honour is named in the workspace's statusDetail, never
// silently dropped.
func TestDevcontainerSubsetWithComments(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p, _ := repoWith(t, h, map[string]string{".devcontainer/devcontainer.json": `{
		// The image applies on Kubernetes only.
		"image": "mcr.microsoft.com/devcontainers/go:1",
		"onCreateCommand": "echo created > created.txt",
		"postCreateCommand": ["sh", "-c", "echo posted >> created.txt"],
		"containerEnv": {"FROM_DEVCONTAINER": "yes",},
		"features": {"ghcr.io/devcontainers/features/node:1": {}},
		/* a trailing comma, as the spec's files have */
	}`})
	id := create(t, h, p, `cat created.txt; echo "env $FROM_DEVCONTAINER"`)
	ws := waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if got := reply(t, h, id, 2); got != "created\nposted\nenv yes" {
		t.Errorf("reply %q", got)
	}
	detail, _ := ws["statusDetail"].(string)
	for _, want := range []string{"image mcr.microsoft.com/devcontainers/go:1", "not applied", "ignored features"} {
		if !strings.Contains(detail, want) {
			t.Errorf("statusDetail should say %q: %q", want, detail)
		}
	}
}

// The project's own settings win over the repository's file; clearing them lets the
// file apply again. A symlink in the repository is no environment file.
func TestProjectSettingsWinOverTheRepository(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	p, dir := repoWith(t, h, map[string]string{".wshub/environment.json": `{"env": {"FROM": "repository"}}`})
	ctx := context.Background()
	if _, err := h.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: p.ID,
		Environment: []byte(`{"env": {"FROM": "settings"}}`)}); err != nil {
		t.Fatal(err)
	}
	id := create(t, h, p, `echo "$FROM"`)
	waitFor(t, h, id, "turn", idleAfterTurns(1))
	if got := reply(t, h, id, 2); got != "settings" {
		t.Errorf("settings should win: %q", got)
	}
	if _, err := h.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: p.ID, ClearEnvironment: true}); err != nil {
		t.Fatal(err)
	}
	id = create(t, h, p, `echo "$FROM"`)
	waitFor(t, h, id, "turn", idleAfterTurns(1))
	if got := reply(t, h, id, 2); got != "repository" {
		t.Errorf("with the settings cleared the file applies: %q", got)
	}
	_, err := h.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: p.ID, Environment: []byte(`{"env": {"HOME": "/"}}`)})
	if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInvalidRequest || !strings.Contains(e.Detail, "may not set HOME") {
		t.Errorf("bad settings are refused in words: %v", err)
	}

	// A symlink named .wshub/environment.json pointing at a file of the hub's host.
	secret := dir + "-hostfile.json"
	if err := os.WriteFile(secret, []byte(`{"env": {"FROM": "host"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hubtest.Git(t, dir, "rm", "-q", ".wshub/environment.json")
	if err := os.MkdirAll(dir+"/.wshub", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, dir+"/.wshub/environment.json"); err != nil {
		t.Fatal(err)
	}
	hubtest.Git(t, dir, "add", "-A")
	hubtest.Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "symlink")
	if _, err := h.Service.Admin.RefreshProject(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	id = create(t, h, p, `echo "from:$FROM"`)
	waitFor(t, h, id, "turn", idleAfterTurns(1))
	if got := reply(t, h, id, 2); got != "from:" {
		t.Errorf("a symlinked environment file must not be read: %q", got)
	}
}
