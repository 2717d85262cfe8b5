package chat

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wshub/wshub/core"
)

// The words of a turn's status message and of approval messages, shared by the
// platforms (issue 16). Each platform adds its buttons: Stop on a running turn's
// status, Allow and Deny on an approval.

// Button labels.
const (
	LabelStop  = "Stop"
	LabelAllow = "Allow"
	LabelDeny  = "Deny"
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
	}
	if v.Waiting != nil {
		fmt.Fprintf(&b, "\n%s Waiting for approval: %s", p.Lock, p.step(*v.Waiting))
	}
	return b.String()
}

// step words one tool step: the tool, then its summary as code.
func (p Platform) step(s core.ChatStep) string {
	tool := p.escape(strings.TrimSpace(s.Tool))
	if tool == "" {
		tool = "step"
	}
	sum := strings.TrimSpace(strings.ReplaceAll(s.Summary, "\n", " "))
	if sum == "" {
		return tool
	}
	return tool + " " + codeSpan(cutRunes(sum, maxStepRunes))
}

// codeSpan shows s as inline code; backticks inside become ' (a span cannot hold them).
func codeSpan(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

// maxApprovalRunes is the longest summary an approval question shows. An approval is
// never cut like a step: a person allows what they read, and a cut command would run
// its hidden tail too (`echo safe`, 400 spaces, `; rm -rf ~`). A longer one (core
// allows up to core.MaxApprovalSummary) is asked without Allow: it can be denied in
// the thread, and allowed through the API, which shows it whole. Discord's 2,000
// characters a message bound it.
const maxApprovalRunes = 1500

// ApprovalShownWhole reports whether an approval's question shows its summary whole;
// when it does not, the question offers Deny only.
func ApprovalShownWhole(summary string) bool {
	s := strings.TrimSpace(summary)
	// ``` would end the code block the summary is shown in.
	return utf8.RuneCountInString(s) <= maxApprovalRunes && !strings.Contains(s, "```")
}

// approvalStep words what an approval is about, whole: a short one-line summary as
// inline code like a step; any other in a code block, which shows backticks and
// newlines as they are (inline code would show them as something else); one too long
// to show, by its length.
func (p Platform) approvalStep(tool, summary string) string {
	sum := strings.TrimSpace(summary)
	if sum == "" || utf8.RuneCountInString(sum) <= maxStepRunes && !strings.ContainsAny(sum, "`\n") {
		return p.step(core.ChatStep{Tool: tool, Summary: sum})
	}
	name := p.escape(strings.TrimSpace(tool))
	if name == "" {
		name = "step"
	}
	if !ApprovalShownWhole(sum) {
		return fmt.Sprintf("%s (%d characters, too long to show here; read it whole and decide through the API)", name, utf8.RuneCountInString(sum))
	}
	return name + ":\n```\n" + p.escape(sum) + "\n```"
}

// after joins an approval's step and what follows it: a sentence goes on after inline
// words, and on its own line after a code block.
func after(step, rest string) string {
	if strings.HasSuffix(step, "```") {
		return step + "\n" + strings.TrimPrefix(rest, ". ")
	}
	return step + rest
}

// ApprovalText asks for a decision on what the agent wants to do.
func (p Platform) ApprovalText(tool, summary string) string {
	question := ". Allow it?"
	if !ApprovalShownWhole(summary) {
		question = ". Deny it here, or allow it through the API."
	}
	return p.Lock + " The agent asks to run " + after(p.approvalStep(tool, summary), question)
}

// ApprovalDecided says how an approval ended, under its question; who is the
// platform's mention of who decided ("" for none).
func (p Platform) ApprovalDecided(tool, summary string, status core.ApprovalStatus, who string) string {
	step := p.approvalStep(tool, summary)
	if !strings.HasSuffix(step, "```") {
		step += "."
	}
	return p.Lock + " The agent asked to run " + step + "\n" + p.DecisionLine(status, who)
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

// DecidedBy words a decision's author for a platform: its own members by mention
// (mention formats a user id), the API as "the API".
func DecidedBy(by, platform string, mention func(userID string) string) string {
	switch {
	case by == "":
		return ""
	case by == "api":
		return "the API"
	case strings.HasPrefix(by, platform+":"):
		return mention(strings.TrimPrefix(by, platform+":"))
	}
	if i := strings.IndexByte(by, ':'); i > 0 {
		return "someone on " + by[:i]
	}
	return by
}
