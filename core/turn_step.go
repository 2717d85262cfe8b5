package core

import (
	"cmp"
	"strings"
)

// Step is one thing the agent did in a turn, in words people read ("Ran `ls -la`",
// "Edited src/app.go"), made from the turn's events for the app's pages: a tool's start
// and end are one step, and the agent's text in pieces is one paragraph.
type Step struct {
	// Verb says what happened ("Ran", "Edited", "Asked to run", "Allowed"); Object is
	// what it happened to, shown as code ("" for none); Text is the agent's words
	// (a text step, Verb "").
	Verb, Object, Text string
	// Running: the tool has started and not finished yet.
	Running bool
	// Refused: a tool that did not run (its ask was denied).
	Refused bool
}

// verb is what a tool does, done ("Ran") and to be done ("run").
type verb struct{ done, todo string }

// toolVerbs are the verbs of the agents' tools, by tool name in lower case: Claude
// Code's, Codex's, Cursor's and Grok's names for the same few things.
var toolVerbs = map[string]verb{
	"bash": {"Ran", "run"}, "shell": {"Ran", "run"}, "exec": {"Ran", "run"}, "command": {"Ran", "run"},
	"run_terminal_cmd": {"Ran", "run"}, "local_shell": {"Ran", "run"},
	"edit": {"Edited", "edit"}, "multiedit": {"Edited", "edit"}, "apply_patch": {"Edited", "edit"},
	"str_replace": {"Edited", "edit"}, "edit_file": {"Edited", "edit"}, "notebookedit": {"Edited", "edit"},
	"write": {"Wrote", "write"}, "create_file": {"Wrote", "write"},
	"read": {"Read", "read"}, "view": {"Read", "read"}, "read_file": {"Read", "read"},
	"grep": {"Searched", "search"}, "glob": {"Searched", "search"}, "search": {"Searched", "search"},
	"ls": {"Listed", "list"}, "list_dir": {"Listed", "list"},
	"webfetch": {"Fetched", "fetch"}, "web_fetch": {"Fetched", "fetch"},
	"websearch": {"Searched the web for", "search the web for"}, "web_search": {"Searched the web for", "search the web for"},
	"todowrite": {"Planned", "plan"}, "task": {"Delegated", "delegate"},
}

// toolStep is a tool's step: its verb, or "Used <tool>" for a tool not known here.
// A refused one says what was not done ("Was not allowed to run").
func toolStep(e *TurnEvent, refused bool) Step {
	v, ok := toolVerbs[strings.ToLower(e.Tool)]
	if !ok {
		tool := cmp.Or(e.Tool, "a tool")
		v = verb{"Used " + tool, "use " + tool}
	}
	if refused {
		return Step{Verb: "Was not allowed to " + v.todo, Object: e.Summary, Refused: true}
	}
	return Step{Verb: v.done, Object: e.Summary}
}

// StepsOf turns one turn's events, in order, into its steps. Setup output and the
// turn's end are not steps (the page shows them elsewhere).
func StepsOf(events []*TurnEvent) []Step {
	var steps []Step
	open := map[string][]int{} // running steps by tool, oldest first
	for _, e := range events {
		switch e.Type {
		case EventToolStarted:
			s := toolStep(e, false)
			s.Running = true
			open[e.Tool] = append(open[e.Tool], len(steps))
			steps = append(steps, s)
		case EventToolFinished, EventToolDenied:
			refused := e.Type == EventToolDenied
			if idx := open[e.Tool]; len(idx) > 0 {
				started := &steps[idx[0]]
				if refused {
					*started = toolStep(&TurnEvent{Tool: e.Tool, Summary: started.Object}, true)
				}
				started.Running = false
				open[e.Tool] = idx[1:]
			} else if refused {
				steps = append(steps, toolStep(e, true))
			}
		case EventText:
			if n := len(steps); n > 0 && steps[n-1].Verb == "" {
				steps[n-1].Text += e.Delta
			} else {
				steps = append(steps, Step{Text: e.Delta})
			}
		case EventApprovalRequested:
			v := ViewAsk(e.Tool, e.Summary, e.Input)
			steps = append(steps, Step{Verb: "Asked to " + v.Head, Object: headLine(v.Body)})
		case EventApprovalResolved:
			steps = append(steps, decisionStep(e))
		}
	}
	return steps
}

// decisionStep says who decided an ask, and how.
func decisionStep(e *TurnEvent) Step {
	s := Step{Verb: "Allowed"}
	if e.Status != ApprovalAllowed {
		s.Verb = "Denied"
	}
	switch {
	case e.Decider != nil && e.Decider.Name != "":
		s.Verb += " by " + e.Decider.Name
	case e.Reason != "":
		s.Verb += ": " + e.Reason
	case e.Status != ApprovalAllowed && e.Status != ApprovalDenied:
		s.Verb = "The ask " + string(e.Status)
	}
	return s
}

// headLine is a text's first line, marked as cut when more follows.
func headLine(s string) string {
	line, rest, more := strings.Cut(strings.TrimSpace(s), "\n")
	if more && strings.TrimSpace(rest) != "" {
		return line + " …"
	}
	return line
}
