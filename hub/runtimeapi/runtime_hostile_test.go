package runtimeapi_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// A runtime is untrusted: an upload that is not a bundle of its branch is refused
// before git reads it, with words that name no path of the hub, and a report says
// only what the hub could have said itself.
func TestRuntimeUploadsAndReportsAreChecked(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, fakeMachine(t))
	id := hubtest.CreateOn(t, h, "process", "first")
	token := machineToken(t, h, id)
	session := "session-hostile-01"
	call := func(method, path string, body any, status int, code string) map[string]any {
		t.Helper()
		r := h.Call(method, "/internal/runtime/v1"+path, token, body, "X-Wshub-Runtime-Session", session)
		if r.Status != status || code != "" && r.Code() != code {
			t.Fatalf("%s %s: expected %d %s, got %d %s", method, path, status, code, r.Status, r.Raw)
		}
		if strings.Contains(string(r.Raw), h.Config.DataDir) || strings.Contains(string(r.Raw), "mirrors/") {
			t.Fatalf("%s %s: the answer names the hub's paths: %s", method, path, r.Raw)
		}
		return r.Body
	}
	call("POST", "/hello", nil, 200, "")
	_, _, head := runtimeCheckout(t, h, token, session)
	call("POST", "/ready", nil, 204, "")
	turn := call("POST", "/next", map[string]any{"waitSeconds": 0}, 200, "")

	for _, body := range []string{"gitdir: ../mirrors/prj_0000000000000000.git\n", "gitdir: /etc\n", "# v2 git bundle\n"} {
		r := call("POST", "/commits", body, 400, "commits_refused")
		if strings.Contains(r["detail"].(string), "/etc") || strings.Contains(r["detail"].(string), "fatal") {
			t.Fatalf("expected a fixed sentence, got %v", r["detail"])
		}
	}

	path := "/turns/" + turn["turnId"].(string)
	other := strings.Repeat("a", 40)
	for name, rep := range map[string]map[string]any{
		"a head the hub does not hold": {"outcome": "completed", "commit": map[string]any{"head": other, "files": 1}},
		"a head that is no commit id":  {"outcome": "completed", "commit": map[string]any{"head": "HEAD~1"}},
		"a failure code of its own":    {"outcome": "error", "failureCode": strings.Repeat("x", 4096)},
		"a failure code on success":    {"outcome": "completed", "failureCode": "agent_error"},
		"a session id of 15 MiB":       {"outcome": "completed", "sessionId": strings.Repeat("s", 15<<20)},
		"a session id with a newline":  {"outcome": "completed", "sessionId": "abc\ndef"},
		"negative counts":              {"outcome": "completed", "commit": map[string]any{"head": head, "files": -1}},
	} {
		t.Run(name, func(t *testing.T) {
			status := 400
			r := h.Call("POST", "/internal/runtime/v1"+path, token, rep, "X-Wshub-Runtime-Session", session)
			if r.Status != status {
				t.Fatalf("expected %d, got %d %.300s", status, r.Status, r.Raw)
			}
		})
	}
	// The head the hub holds is taken, and the turn is recorded once.
	ok := map[string]any{"outcome": "completed", "reply": "done", "sessionId": "0b6f2c1e-5d3a-4c59-9a57-1f0e2d3c4b5a",
		"commit": map[string]any{"head": head, "files": 0}}
	if r := call("POST", path, ok, 200, ""); r["recorded"] != true {
		t.Fatalf("expected the report recorded, got %v", r)
	}
}

// The runtime's token is its only credential, and its agents are untrusted: an agent
// that looks everywhere it can (every process's environment and command line, the
// descriptors it holds, the runtime's and its own directories) finds no wsrt_ value,
// sandboxed or not. The token reaches the runtime through a pipe it reads once, not
// its environment, which /proc/<pid>/environ keeps showing after Unsetenv.
func TestRuntimeAgentsCannotFindTheRuntimeToken(t *testing.T) {
	t.Parallel()
	_, here, _, _ := runtime.Caller(0)
	seeker := filepath.Join(filepath.Dir(here), "testdata", "seeker.sh")
	for _, sandbox := range []string{"bwrap", "none"} {
		t.Run("sandbox "+sandbox, func(t *testing.T) {
			t.Parallel()
			h := hubtest.StartProcessHub(t, hubtest.WithAgentCommand("agent_1", seeker),
				hubtest.WithConfig(func(c *hub.Config) { c.Sandbox = sandbox }))
			id := hubtest.CreateOn(t, h, "process", "seek")
			hubtest.WaitFor(t, h, id, "the turn's reply", hubtest.IdleAfterTurns(1))
			got := hubtest.Replies(t, h, id)
			if len(got) != 1 || !strings.HasPrefix(got[0], "completed: ") {
				t.Fatalf("expected the seeker's turn completed, got %q", got)
			}
			if found := ownFinds(got[0], h.Config.DataDir, sandbox); len(found) > 0 {
				t.Fatalf("expected the agent to find no runtime token, got %q", found)
			}
		})
	}
}

// ownFinds are the places the seeker's reply names that are this hub's. Unsandboxed
// ("none": no isolation, by the operator's choice) it shares the machine's /tmp with
// the other tests running beside it, whose stand-in runtimes write their tokens into
// their own temporary trees: those are not this hub's to hide. Sandboxed, every find
// counts.
func ownFinds(reply, dataDir, sandbox string) []string {
	list, ok := strings.CutPrefix(reply, "completed: found:")
	if !ok {
		return nil // "nothing found"
	}
	tmp := filepath.Clean(os.TempDir()) + string(filepath.Separator)
	root := dataDir
	if rest, under := strings.CutPrefix(dataDir, tmp); under {
		root = tmp + strings.SplitN(rest, string(filepath.Separator), 2)[0] // this test's own tree
	}
	var own []string
	for _, f := range strings.Fields(list) {
		if sandbox == "none" && strings.HasPrefix(f, tmp) && !strings.HasPrefix(f, root+string(filepath.Separator)) {
			continue
		}
		own = append(own, f)
	}
	return own
}

// A turn whose work the hub cannot commit says so in its reply, and the workspace's
// head does not move: it used to end "completed" in silence.
func TestATurnWhoseCommitFailsSaysSo(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "write first")
	first := hubtest.WaitFor(t, h, id, "the first turn", hubtest.IdleAfterTurns(1))
	hubtest.Send(t, h, id, "breakgit second")
	ws := hubtest.WaitFor(t, h, id, "the second turn", hubtest.IdleAfterTurns(2))
	got := hubtest.Replies(t, h, id)
	if len(got) != 2 || !strings.Contains(got[1], "The hub could not commit this turn's work") {
		t.Fatalf("expected the second reply to say the work was not committed, got %q", got)
	}
	if ws["headCommit"] != first["headCommit"] || first["headCommit"] == nil {
		t.Fatalf("expected headCommit to stay at %v, got %v", first["headCommit"], ws["headCommit"])
	}
}
