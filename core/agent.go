package core

import (
	"context"
	"encoding/json"
	"regexp"
)

// AgentRunner runs one turn of a coding agent in a workspace checkout. Cancelling ctx
// (pause, archive, delete, shutdown) or its deadline (turn time limit) stops the agent
// and the turn ends interrupted.
type AgentRunner interface {
	RunTurn(ctx context.Context, req TurnRequest) TurnResult
	// RunScript runs an environment's script (setup, update) in the workspace's
	// sandbox, under the same limits and network as its turns (env_setup.go).
	RunScript(ctx context.Context, req ScriptRequest) ScriptResult
}

// TurnRequest is everything an agent needs for one turn.
type TurnRequest struct {
	WorkspaceID string
	TurnID      string
	Agent       string // agent_1..agent_4
	Model       string // passed to the agent unchanged
	RuntimeMode string // one of RuntimeModes
	Branch      string
	// Dir is the workspace checkout, the agent's working directory.
	Dir string
	// Home is the workspace's home directory, the agent's HOME: kept across turns
	// (agent CLIs keep their sessions there) and never shared with another workspace.
	Home string
	// Network is the project's setting: NetworkFull, NetworkNone or NetworkHost.
	Network string
	// Size is the workspace's machine size: the runner holds the turn's processes to
	// its vCPUs and memory. The zero value leaves the runner's own default.
	Size   ProviderSize
	Prompt string
	// Env are NAME=value variables on top of the sandbox's own: the workspace
	// environment's, then the project's secrets marked for the agent.
	Env []string
	// Attachments are the message's files, as paths relative to Dir.
	Attachments []string
	// SessionID is the agent's session from the previous turn ("" on the first), so
	// the conversation keeps its memory.
	SessionID string
	// Events, when set, is told each step the agent reports while it works (turn
	// events); called from the runner's goroutines.
	Events func(TurnEvent)
	// Approve, when set, asks for a decision on what the agent wants to do (in the
	// approval-required mode) and blocks until someone answers from the API or a chat
	// thread, the approval times out (denied), or ctx ends (denied). Nil: nobody can
	// answer, and what would need approval is denied. Called from the runner's
	// goroutines.
	Approve func(ctx context.Context, ask ApprovalAsk) ApprovalAnswer
}

// ApprovalAsk is one thing an agent asks to be allowed to do.
type ApprovalAsk struct {
	// Key is the agent's own id for the request (Claude Code's tool_use_id, a command
	// agent's id): asked again with the same key in the same turn, it is the same
	// approval, answered the same way.
	Key string
	// Tool is what the agent wants to use ("Bash", "Edit"); Summary what with (the
	// command line, the file), both shown to whoever decides.
	Tool    string
	Summary string
	// Input is the tool's whole input as the agent gave it (JSON: an object, a
	// string), nil when it gave none. It is what is shown, whole, to whoever decides.
	Input json.RawMessage
}

// ApprovalAnswer is the decision on an ApprovalAsk.
type ApprovalAnswer struct {
	ApprovalID string // "" when no approval could be recorded (then Allow is false)
	Allow      bool
	// Reason says, when denied, why (for the agent: "denied by a person", "timed out").
	Reason string
	// Input and InputSHA256, on an Allow of an ask with an input: the input exactly as
	// shown and approved (CanonicalInput), and its hash. The agent runs this input.
	Input       json.RawMessage
	InputSHA256 string
}

// maxAgentSession bounds an agent's session id: it is stored with the workspace and
// read with every listing, and the agent that names it is untrusted.
const maxAgentSession = 256

// agentSessionPattern: agent CLIs' session ids are UUIDs and similar plain tokens.
var agentSessionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// ValidAgentSession reports whether s is a session id the hub keeps: one that is not
// is dropped from a local turn and refused in a runtime's report.
func ValidAgentSession(s string) bool {
	return len(s) <= maxAgentSession && agentSessionPattern.MatchString(s)
}

// TurnResult is how a turn ended.
type TurnResult struct {
	Outcome Outcome // completed | interrupted | error
	// Reply is the agent's final answer text (not tool output).
	Reply string
	// SessionID is the session to resume on the next turn.
	SessionID string
	// FailureCode (agent_not_installed | agent_error) and FailureMessage explain an error.
	FailureCode    string
	FailureMessage string
	// Commit is what the turn left on its branch (set by the runtime after the agent).
	Commit TurnCommit
}
