package chat

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wshub/wshub/core"
)

// An approval question shows exactly what will run: the tool's input, verbatim, in a
// code block, with control and invisible characters made visible (a tab as \t, a
// zero-width space as \u200b, a right-to-left override as \u202e) and spaces kept as
// they are, however many. What does not fit a message is said in words, and the
// whole input goes along as a file (the platform attaches it).

// Question is an approval's message, ready for a platform.
type Question struct {
	// Text is the message: what is asked, the code block, and, when the block was
	// cut, how much more there is.
	Text string
	// Cut reports that Text does not hold the whole of what will run: attach File.
	Cut bool
	// File is the whole input, for the attachment: FileName holds FileBody.
	FileName string
	FileBody []byte
}

// ApprovalAsk is what a question is made from (a core.ChatNotice's approval fields).
type ApprovalAsk struct {
	ApprovalID, Tool, Summary string
	Input                     json.RawMessage
	InputSHA256               string
}

// AskOf takes the approval fields of a notice.
func AskOf(n core.ChatNotice) ApprovalAsk {
	return ApprovalAsk{ApprovalID: n.ApprovalID, Tool: n.Tool, Summary: n.Summary, Input: n.Input, InputSHA256: n.InputSHA256}
}

// codeBlock wraps text in a code block; a run of three backticks inside, which would
// end the block, gets a zero-width space after each backtick but the last (an
// invisible character the agent cannot have written: its own show as \u200b).
func codeBlock(text string) string {
	for strings.Contains(text, "```") {
		text = strings.ReplaceAll(text, "``", "`\u200b`")
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fenceMark + "\n" + text + fenceMark
}

// Question is the approval's message in at most limit runes (the platform's limit
// for a message with buttons, less room for a decision line under it).
func (p Platform) Question(a ApprovalAsk, limit int) Question {
	v := core.ViewAsk(a.Tool, a.Summary, a.Input)
	head, whole := v.Head, v.Whole
	shown := core.VisibleRunes(strings.TrimRight(v.Body, "\n"))
	intro := fmt.Sprintf("%s The agent asks to %s:", p.Lock, p.escapeLabel(head))
	ask := "Allow it?"
	if !whole {
		ask = "The agent gave only this summary, cut short: the rest of what would run is not known. Allow it?"
	}
	text := func(n int) string {
		block := codeBlock(p.escape(strings.Join(shown[:n], "")))
		if n == len(shown) {
			return intro + "\n" + block + "\n" + ask
		}
		more := len(shown) - n
		return fmt.Sprintf("%s\n%s\n%d more %s: see the attached file, which holds the whole input%s. %s",
			intro, block, more, core.Plural(more, "character", "characters"), hashNote(a.InputSHA256), ask)
	}
	q := Question{Text: text(len(shown))}
	if utf8.RuneCountInString(q.Text) > limit {
		// The longest head of the view that fits (escapes make the size of a head
		// not a simple count).
		lo, hi := 0, len(shown)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if utf8.RuneCountInString(text(mid)) <= limit {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		q.Text, q.Cut = text(lo), true
	}
	if q.Cut && len(a.Input) > 0 {
		q.FileName, q.FileBody = "approval-"+a.ApprovalID+".json", a.Input
	}
	return q
}

// hashNote names the input's hash, so the file can be checked against what an Allow
// lets run.
func hashNote(sum string) string {
	if len(sum) < 12 {
		return ""
	}
	return " (sha256 " + sum[:12] + "…)"
}

// Decided is an approval's question with how it was decided under it.
func (p Platform) Decided(question string, status core.ApprovalStatus, who string) string {
	return strings.TrimSpace(question) + "\n" + p.DecisionLine(status, who)
}

// DecidedText is an approval's question with how it was decided under it, naming
// who decided (a member by mention).
func (p Platform) DecidedText(question string, status core.ApprovalStatus, by, name string) string {
	return p.Decided(question, status, p.DecidedBy(by, name))
}
