package core

import "context"

// AgentRunner runs one turn of a coding agent in a workspace checkout. Cancelling ctx
// (pause, archive, delete, shutdown) or its deadline (turn time limit) stops the agent
// and the turn ends interrupted.
type AgentRunner interface {
	RunTurn(ctx context.Context, req TurnRequest) TurnResult
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
	// Network is the project's setting: NetworkFull, or NetworkNone for no network.
	Network string
	Prompt  string
	// Attachments are the message's files, as paths relative to Dir.
	Attachments []string
	// SessionID is the agent's session from the previous turn ("" on the first), so
	// the conversation keeps its memory.
	SessionID string
	// Events, when set, is told each step the agent reports while it works (turn
	// events); called from the runner's goroutines.
	Events func(TurnEvent)
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
