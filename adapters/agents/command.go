package agents

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/nofollow"
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
	at := r.place(req)
	at.showCommand(command)
	sessionHost, sessionAgent, err := at.sessionFile(req.WorkspaceID)
	if err != nil {
		return failed(core.FailureAgentError, fmt.Sprintf("the hub could not create the session file: %v", err))
	}

	// The approval decisions' pipe: the agent reads fd 4. Asks still waiting when the
	// agent is gone are ended with askCtx.
	decisionsR, decisionsW, err := os.Pipe()
	if err != nil {
		return failed(core.FailureAgentError, fmt.Sprintf("the hub could not create the decisions pipe: %v", err))
	}
	askCtx, endAsks := context.WithCancel(ctx)
	answers := &decisions{ctx: askCtx, approve: req.Approve, w: decisionsW}
	defer answers.close()
	defer endAsks()

	out := &headBuffer{max: maxStdout}
	events := newEventLines(req.Events, answers.ask)
	inv := sandbox.Process{
		Path: sh,
		Args: []string{"-c", command},
		Env: r.turnEnv(req, at.home, "WSHUB_SESSION_FILE="+sessionAgent, "WSHUB_EVENTS_FD="+eventsFD,
			"WSHUB_DECISIONS_FD="+decisionsFD),
		Stdin:  req.Prompt,
		Stdout: out,
		Grace:  r.grace,
		Events: events,
		Extra:  []*os.File{decisionsR},
	}
	st := r.box.Run(ctx, req.WorkspaceID, req.Size, at.wrap(inv))
	events.end() // a last line without its newline still counts
	reply := strings.ToValidUTF8(strings.TrimSuffix(out.String(), "\n"), "\uFFFD")
	session := readSession(sessionHost)
	if session == "" {
		session = req.SessionID
	}

	switch {
	case st.StartErr != nil:
		return startFailure("the agent command", st.StartErr)
	case st.Interrupted:
		return core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: reply, SessionID: session}
	case st.Limit != "":
		res := limitFailure(st)
		res.SessionID = session
		return res
	case st.Code != 0:
		res := exitFailure("The agent command", st, "")
		res.SessionID = session
		return res
	}
	return core.TurnResult{Outcome: core.OutcomeCompleted, Reply: reply, SessionID: session}
}

// readSession reads the session id a command agent wrote, "" if none.
func readSession(path string) string {
	// O_NOFOLLOW: without the sandbox the agent can replace the file with a symlink to
	// something only the hub may read; the hub would then hand it back as the session.
	f, err := nofollow.Open(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
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
