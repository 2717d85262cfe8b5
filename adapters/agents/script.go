package agents

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// scriptShell runs the environment's script with standard error joined to standard
// output, so people read both in the order they were written. The script is the
// argument after the run's name ($0), never spliced into this text.
const scriptShell = `exec 2>&1; exec sh -c "$1" "$0"`

// RunScript runs a project environment's script (setup, update) as a turn runs: in
// the workspace's sandbox, cgroup and network, with the sandbox's allow-listed
// environment plus req.Env. Agents' credentials (WSHUB_AGENT_ENV) are not given: a
// script is the repository's, not the agent's.
func (r *Runner) RunScript(ctx context.Context, req core.ScriptRequest) core.ScriptResult {
	if fi, err := os.Stat(req.Dir); err != nil || !fi.IsDir() {
		return core.ScriptResult{ExitCode: -1, Err: fmt.Errorf("the workspace checkout is not a directory on this machine")}
	}
	if err := os.MkdirAll(req.Home, 0o700); err != nil {
		return core.ScriptResult{ExitCode: -1, Err: fmt.Errorf("the workspace's home directory could not be made: %v", err)}
	}
	if err := r.box.EndStrays(req.WorkspaceID); err != nil {
		return core.ScriptResult{ExitCode: -1, Err: fmt.Errorf("processes of an earlier run could not be stopped: %v", err)}
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return core.ScriptResult{ExitCode: -1, Err: err}
	}
	turn := core.TurnRequest{WorkspaceID: req.WorkspaceID, TurnID: req.RunID, Dir: req.Dir, Home: req.Home,
		Network: req.Network, Size: req.Size}
	at := r.place(turn)
	// Lines go whole to core, which masks the project's secrets in them before it
	// cuts them: cut here, a secret cut in two would show its head.
	lines := &lineWriter{max: 1 << 20, fn: func(b []byte) {
		if req.Output != nil {
			req.Output(strings.ToValidUTF8(string(b), "\uFFFD"))
		}
	}}
	inv := sandbox.Process{
		Path:   sh,
		Args:   []string{"-c", scriptShell, cmp.Or(req.Name, core.ScriptSetup), req.Script},
		Env:    r.scriptEnv(req, at.home),
		Stdout: lines,
		Grace:  r.grace,
	}
	st := r.box.Run(ctx, turn.WorkspaceID, turn.Size, at.wrap(inv))
	lines.close()
	switch {
	case st.StartErr != nil:
		return core.ScriptResult{ExitCode: -1, Err: st.StartErr}
	case st.Interrupted:
		return core.ScriptResult{ExitCode: -1, Interrupted: true}
	}
	return core.ScriptResult{ExitCode: st.Code, Limit: st.Limit}
}

// scriptEnv is turnEnv without the agents' credentials and the turn's variables.
func (r *Runner) scriptEnv(req core.ScriptRequest, home string) []string {
	env := []string{
		"PATH=" + r.box.ShownPath(cmp.Or(r.getenv("PATH"), sandbox.DefaultPath)),
		"HOME=" + home,
		"LANG=" + cmp.Or(r.getenv("LANG"), "C.UTF-8"),
		"TERM=dumb",
		"CI=true", // package managers then neither prompt nor draw progress bars
	}
	env = append(env, req.Env...)
	return append(env, "WSHUB_WORKSPACE_ID="+req.WorkspaceID, "WSHUB_SCRIPT="+req.Name)
}
