package chat

import (
	"fmt"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// The words of a turn's status message and of approval messages, shared by the
// platforms. Each platform adds its buttons: Stop on a running turn's
// status, Allow and Deny on an approval.

// Button labels.
const (
	LabelStop        = "Stop"
	LabelAllow       = "Allow"
	LabelDeny        = "Deny"
	LabelPullRequest = "Open pull request"
)

// maxStepRunes bounds a step's summary in a status line.
const maxStepRunes = 120

// Elapsed words a duration as the status shows it: "12s", "1m12s", "1h02m".
func Elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// StatusText is a turn's status: "Working… 1m12s" with the last steps and what waits
// for approval, or how the turn ended.
func (p Platform) StatusText(v core.ChatStatusView) string {
	var b strings.Builder
	steps := ""
	switch v.Steps {
	case 0:
	case 1:
		steps = " · 1 step"
	default:
		steps = fmt.Sprintf(" · %d steps", v.Steps)
	}
	if v.Script != "" {
		return p.scriptStatus(v)
	}
	if v.Finished {
		switch v.Outcome {
		case core.OutcomeCompleted:
			fmt.Fprintf(&b, "%s Finished in %s%s", p.Done, Elapsed(v.Elapsed), steps)
		case core.OutcomeInterrupted:
			fmt.Fprintf(&b, "%s Stopped after %s%s", p.Stopped, Elapsed(v.Elapsed), steps)
		default:
			fmt.Fprintf(&b, "%s Failed after %s%s", p.Warning, Elapsed(v.Elapsed), steps)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s Working… %s%s", p.Working, Elapsed(v.Elapsed), steps)
	for _, s := range v.Recent {
		b.WriteString("\n• ")
		b.WriteString(p.step(s))
		if s.Denied {
			b.WriteString(" (denied: not run)")
		}
	}
	if v.Waiting != nil {
		fmt.Fprintf(&b, "\n%s Waiting for approval: %s", p.Lock, p.step(*v.Waiting))
	}
	return b.String()
}

// step words one tool step: the tool, then its summary as code.
func (p Platform) step(s core.ChatStep) string {
	tool := p.escapeLabel(strings.TrimSpace(s.Tool))
	if tool == "" {
		tool = "step"
	}
	sum := strings.TrimSpace(strings.ReplaceAll(s.Summary, "\n", " "))
	if sum == "" {
		return tool
	}
	// Escaped after the cut, so no entity is cut in half: Slack reads <!channel>,
	// <@U…> and <http://x|y> inside code spans too.
	return tool + " " + codeSpan(p.escape(cutRunes(sum, maxStepRunes)))
}

// DecisionLine says how an approval ended: "✅ Allowed by <who>".
func (p Platform) DecisionLine(status core.ApprovalStatus, who string) string {
	var how string
	switch status {
	case core.ApprovalAllowed:
		how = p.Done + " Allowed"
	case core.ApprovalDenied:
		how = p.Cross + " Denied"
	case core.ApprovalTimedOut:
		how = p.Cross + " Denied: nobody answered in time"
	case core.ApprovalClosed:
		how = p.Stopped + " The turn ended before a decision"
	default:
		how = string(status)
	}
	if who != "" {
		how += " by " + who
	}
	return how
}

// DecidedBy words a decision's author for the platform p: its own members by
// mention, anyone else by the name they had (name, escaped), from where they decided.
func (p Platform) DecidedBy(by, name string) string {
	kind, id, _ := strings.Cut(by, ":")
	switch {
	case by == "":
		return ""
	case kind == p.Name && id != "":
		return Mention(id)
	case kind == core.AuthorAPI && name != "":
		return "the API key " + p.Literal(name)
	case kind == core.AuthorAPI:
		return "the API"
	case kind == core.AuthorApp && name != "":
		return p.Literal(name) + " in the app"
	case kind == core.AuthorApp:
		return "someone in the app"
	case id != "" && name != "":
		return p.Literal(name) + " on " + kind
	case id != "":
		return "someone on " + kind
	}
	return by
}

// scriptStatus is the status of a project environment's script run: "Setting up the
// environment… 12s" and its newest line of output, or how it ended.
func (p Platform) scriptStatus(v core.ChatStatusView) string {
	what := "Setting up the environment"
	if v.Script == core.ScriptUpdate {
		what = "Updating the environment"
	}
	if v.Finished {
		switch v.Outcome {
		case core.OutcomeCompleted:
			return fmt.Sprintf("%s %s: done in %s", p.Done, what, Elapsed(v.Elapsed))
		case core.OutcomeInterrupted:
			return fmt.Sprintf("%s %s: stopped after %s", p.Stopped, what, Elapsed(v.Elapsed))
		}
		return fmt.Sprintf("%s %s: failed after %s (the workspace's page has its output)", p.Warning, what, Elapsed(v.Elapsed))
	}
	s := fmt.Sprintf("%s %s… %s", p.Working, what, Elapsed(v.Elapsed))
	if v.Output != "" {
		s += "\n" + codeSpan(p.escape(cutRunes(v.Output, maxStepRunes)))
	}
	return s
}
