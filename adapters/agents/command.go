package agents

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/wshub/wshub/core"
)

// maxSessionID bounds what is read from a command agent's session file.
const maxSessionID = 4096

// runCommand runs a command agent (design.md, "Command-agent protocol"): the command
// under sh -c in the checkout, the prompt on standard input, the turn in WSHUB_*
// variables; standard output is the reply.
//
// Extension: the agent may keep a session across turns. WSHUB_SESSION_ID holds the
// session its previous turn reported ("" on the first), and WSHUB_SESSION_FILE names
// an empty file; what the agent writes there (trimmed) is the session of this turn.
// When it writes nothing, the previous session is kept.
func (r *Runner) runCommand(ctx context.Context, command string, req core.TurnRequest) core.TurnResult {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return startFailure("sh", err)
	}
	sessionFile, err := os.CreateTemp("", "wshub-session-*")
	if err != nil {
		return failed(core.FailureAgentError, fmt.Sprintf("the hub could not create the session file: %v", err))
	}
	_ = sessionFile.Close()
	defer os.Remove(sessionFile.Name())

	out := &headBuffer{max: maxStdout}
	st := run(ctx, invocation{
		path:   sh,
		args:   []string{"-c", command},
		dir:    req.Dir,
		env:    turnEnv(req, "WSHUB_SESSION_FILE="+sessionFile.Name()),
		stdin:  req.Prompt,
		stdout: out,
		grace:  r.grace,
	})
	reply := strings.ToValidUTF8(strings.TrimSuffix(out.String(), "\n"), "\uFFFD")
	session := readSession(sessionFile.Name())
	if session == "" {
		session = req.SessionID
	}

	switch {
	case st.startErr != nil:
		return startFailure("the agent command", st.startErr)
	case st.interrupted:
		return core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: reply, SessionID: session}
	case st.code != 0:
		res := exitFailure("The agent command", st, "")
		res.SessionID = session
		return res
	}
	return core.TurnResult{Outcome: core.OutcomeCompleted, Reply: reply, SessionID: session}
}

// readSession reads the session id a command agent wrote, "" if none.
func readSession(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSessionID))
	if err != nil {
		return ""
	}
	return strings.ToValidUTF8(strings.TrimSpace(string(b)), "")
}
