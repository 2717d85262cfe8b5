// Package runtimewire is the runtime API's wire: the JSON bodies and headers that
// `wshub runtime`, on a workspace's machine, exchanges with the hub under
// /internal/runtime/v1 (docs/runtime.md). The hub's handlers (api) and the runtime's
// client (wsruntime) both use it, so they cannot drift apart. Standard library only.
package runtimewire

import "encoding/json"

// Prefix is where the runtime API is served.
const Prefix = "/internal/runtime/v1"

// SessionHeader names the calling runtime process (random per process; hello makes it
// the workspace's runtime). Every call but hello must send the session that said hello.
const SessionHeader = "X-Wshub-Runtime-Session"

// HeadHeader carries a branch head: the checkout bundle's, and the uploaded commits'.
const HeadHeader = "X-Wshub-Head"

// MaxWaitSeconds bounds a long poll for the next turn: well inside the hub's write
// timeout and any proxy's idle timeout.
const MaxWaitSeconds = 25

// Hello is the answer to POST /hello: what the runtime needs to run its workspace.
type Hello struct {
	WorkspaceID        string `json:"workspaceId"`
	State              string `json:"state"`
	Agent              string `json:"agent"`
	Model              string `json:"model"`
	RuntimeMode        string `json:"runtimeMode"`
	Branch             string `json:"branch"`
	Network            string `json:"network"`
	TurnTimeoutSeconds int64  `json:"turnTimeoutSeconds"`
	// VCPUCount and MemoryMiB are the workspace's size, which each turn is held to (0:
	// the runtime's own default, all of its machine).
	VCPUCount int   `json:"vcpuCount,omitempty"`
	MemoryMiB int64 `json:"memoryMib,omitempty"`
}

// Heartbeat is the answer to POST /heartbeat.
type Heartbeat struct {
	State string `json:"state"`
}

// Next is the body of POST /next.
type Next struct {
	WaitSeconds int `json:"waitSeconds"`
}

// Turn is the answer to POST /next when a turn is waiting (204 when none came).
type Turn struct {
	TurnID      string       `json:"turnId"`
	MessageID   string       `json:"messageId"`
	Seq         int64        `json:"seq"`
	Prompt      string       `json:"prompt"`
	SessionID   string       `json:"sessionId"`
	Attachments []Attachment `json:"attachments"`
	// CoAuthor is who the turn's commit names in a Co-authored-by trailer ("Name
	// <email>"), absent when no member is behind the message.
	CoAuthor string `json:"coAuthor,omitempty"`
	// Env are NAME=value variables the agent gets on top of the sandbox's own: the
	// workspace environment's, then the project's secrets marked for the agent.
	Env []string `json:"env,omitempty"`
}

// Script is the answer to POST /environment: the project environment's script the
// runtime runs, in its sandbox, before it says it is ready (none: an empty object).
type Script struct {
	RunID  string `json:"runId,omitempty"`
	Name   string `json:"name,omitempty"` // setup or update
	Script string `json:"script,omitempty"`
	// Env are NAME=value: the environment's variables, then the project's secrets.
	Env            []string `json:"env,omitempty"`
	TimeoutSeconds int64    `json:"timeoutSeconds,omitempty"`
	// KeepOut are paths of the checkout kept out of commits, with what the script
	// leaves that git does not track.
	KeepOut []string `json:"keepOut,omitempty"`
	// Caches are the environment's caches, by position: each restored before the
	// script (GET /scripts/{runId}/caches/{i}) or saved after it once it succeeded
	// (PUT .../parts/{n}, then POST /scripts/{runId}/caches/{i}).
	Caches []ScriptCache `json:"caches,omitempty"`
	// CacheMaxBytes bounds each cache's archive (the hub keeps no more for a project).
	CacheMaxBytes int64 `json:"cacheMaxBytes,omitempty"`
}

// ScriptCache is one cache of a setup run.
type ScriptCache struct {
	// Paths are relative to the checkout, or to the home with "~/".
	Paths   []string `json:"paths"`
	Restore bool     `json:"restore,omitempty"`
	Save    bool     `json:"save,omitempty"`
	// Name, Scope and Key (its start) are for what the setup's output says of it.
	Name  string `json:"name"`
	Scope string `json:"scope"`
	Key   string `json:"key"`
}

// CachePartBytes is the most one uploaded part of a cache's archive holds.
const CachePartBytes = 16 << 20

// CacheSaved is the body of POST /scripts/{runId}/caches/{i}: the archive was
// uploaded whole, in Parts parts of CachePartBytes (the last one shorter).
type CacheSaved struct {
	Parts int   `json:"parts"`
	Bytes int64 `json:"bytes"`
	Files int   `json:"files"`
}

// CacheRecorded answers it: false when another workspace saved that cache first.
type CacheRecorded struct {
	Saved bool `json:"saved"`
}

// ScriptOutput is the body of POST /scripts/{runId}/output: lines of the run's output
// from the First-th on (counted from 0), so a batch sent again adds only what the hub
// does not have. At most MaxEventsBatch lines.
type ScriptOutput struct {
	First int      `json:"first"`
	Lines []string `json:"lines"`
}

// ScriptEnd is the body of POST /scripts/{runId}/end: how the run ended.
type ScriptEnd struct {
	Outcome  string `json:"outcome"` // completed, error or interrupted (its time ran out)
	ExitCode int    `json:"exitCode"`
	// Limit says which of the workspace's limits ended it.
	Limit string `json:"limit,omitempty"`
	// Tail are the run's last lines of output (at most 20 are read).
	Tail []string `json:"tail,omitempty"`
	// Lines is how many lines the runtime sent as output.
	Lines int `json:"lines"`
}

// Attachment names a turn's file; GET /attachments/{id} gives its bytes.
type Attachment struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	SizeBytes int64  `json:"sizeBytes"`
}

// Commits is the answer to POST /commits (a git bundle in the body).
type Commits struct {
	Head string `json:"head"`
}

// Report is the body of POST /turns/{turnId}.
type Report struct {
	Outcome        string  `json:"outcome"`
	Reply          string  `json:"reply"`
	SessionID      string  `json:"sessionId"`
	FailureCode    string  `json:"failureCode,omitempty"`
	FailureMessage string  `json:"failureMessage,omitempty"`
	Commit         *Commit `json:"commit,omitempty"`
	// LeftOut are the paths the runtime did not commit, each "path: why".
	LeftOut []string `json:"leftOut,omitempty"`
	// CommitFailed: the runtime could not commit (or upload) the turn's work.
	CommitFailed bool `json:"commitFailed,omitempty"`
}

// Commit is what a turn committed (its commits were uploaded first).
type Commit struct {
	Head       string `json:"head"`
	Files      int    `json:"files"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
}

// Recorded is the answer to POST /turns/{turnId}: false when an earlier attempt of
// the same report recorded the turn.
type Recorded struct {
	Recorded bool `json:"recorded"`
}

// Error is every error answer: {"error": code, "detail": sentence}.
type Error struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// Events is the body of POST /turns/{turnId}/events: the turn's events from the
// First-th on (counted from 0 within the turn), so a batch sent again after a lost
// answer adds only what the hub does not have.
type Events struct {
	First  int     `json:"first"`
	Events []Event `json:"events"`
}

// Event is one turn event (core.TurnEvent's wire form).
type Event struct {
	Type    string `json:"type"`
	Tool    string `json:"tool,omitempty"`
	Summary string `json:"summary,omitempty"`
	Delta   string `json:"delta,omitempty"`
}

// MaxEventsBatch bounds one POST /turns/{turnId}/events.
const MaxEventsBatch = 200

// Stop is the answer to POST /turns/{turnId}/stop-wait (body: Next's waitSeconds):
// true when someone asked to stop the turn; false when the wait ended first.
type Stop struct {
	Stop bool `json:"stop"`
}

// Approval is the body of POST /turns/{turnId}/approvals: the agent asks to be
// allowed a step (core.ApprovalAsk), and the runtime waits up to WaitSeconds for the
// decision. Asked again with the same key, it is the same approval.
type Approval struct {
	Key     string `json:"key"`
	Tool    string `json:"tool"`
	Summary string `json:"summary"`
	// Input is the tool's whole input (JSON), absent when the agent gave none.
	Input       json.RawMessage `json:"input,omitempty"`
	WaitSeconds int             `json:"waitSeconds"`
}

// ApprovalAnswer answers an Approval: Status pending means ask again; any other
// status is final, and Allow says whether the agent may go on (Reason why not).
type ApprovalAnswer struct {
	ApprovalID string `json:"approvalId"`
	Status     string `json:"status"`
	Allow      bool   `json:"allow"`
	Reason     string `json:"reason,omitempty"`
	// Input and InputSHA256, on an Allow of an ask with an input: the input as shown
	// and approved, and its hash (core.ApprovalAnswer).
	Input       json.RawMessage `json:"input,omitempty"`
	InputSHA256 string          `json:"inputSha256,omitempty"`
}

// SetupFailed is the body of POST /setup-failed: the runtime could not make the
// checkout (git refused it on the machine); the hub fails the workspace
// (setup_failed:checkout) with Detail as its statusDetail.
type SetupFailed struct {
	Detail string `json:"detail"`
}
