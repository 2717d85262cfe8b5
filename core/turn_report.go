package core

import (
	"strings"
	"time"
)

// TurnReport is what is known of a turn once it is recorded, for metrics and the log.
type TurnReport struct {
	WorkspaceID, TurnID, Agent string
	Outcome                    Outcome
	// FailureCode is agent_not_installed or agent_error for an error outcome.
	FailureCode string
	// Took is the agent's run, from the message taken to the agent's end.
	Took time.Duration
	// Commit is what the turn left on its branch, and its push.
	Commit TurnCommit
}

// TurnObserver is told of every recorded turn (metrics). Optional.
type TurnObserver interface {
	ObserveTurn(r TurnReport)
}

// reportTurn logs one line per recorded turn and tells the observer. The duration is
// in milliseconds, named so: a JSON log would show a time.Duration as nanoseconds.
func (s *Worker) reportTurn(r TurnReport) {
	s.log().Info("turn finished", "workspace", r.WorkspaceID, "turn", r.TurnID, "agent", r.Agent,
		"outcome", r.Outcome, "failure", r.FailureCode, "durationMs", r.Took.Milliseconds(),
		"commit", r.Commit.SHA, "files", r.Commit.Files, "insertions", r.Commit.Insertions, "deletions", r.Commit.Deletions,
		"pushed", r.Commit.Pushed, "pushRefused", r.Commit.PushRefused)
	if s.turns != nil {
		s.turns.ObserveTurn(r)
	}
}

// commitSubject is the first line of a turn's commit message: the prompt's first line,
// cut to 72 characters, so `git log --oneline` on the branch reads as the conversation.
// TurnCommitMessage is the message of a turn's commit: the prompt's first line as its
// subject (or the turn id when there is none), and the turn and workspace below.
func TurnCommitMessage(prompt, turnID, workspaceID, coAuthor string) string {
	msg := commitSubject(prompt, turnID) + "\n\nwshub turn " + turnID + " in workspace " + workspaceID
	if coAuthor != "" {
		// A trailer, in the message's last paragraph, as forges read it.
		msg += "\n\nCo-authored-by: " + coAuthor
	}
	return msg
}

func commitSubject(prompt, turnID string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "wshub: " + turnID
	}
	if r := []rune(line); len(r) > 72 {
		line = string(r[:71]) + "…"
	}
	return line
}
