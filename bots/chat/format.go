package chat

// Turning an agent's reply into thread posts: escaping for the platform's markup and
// the outcome and truncation lines under the reply (split.go cuts the posts to size).
// Standard library only.

import (
	"strings"
	"unicode/utf8"
)

// maxFailureRunes is the longest failure message shown (api.md 2.5, 8).
const maxFailureRunes = 1200

// Turn outcomes and failure codes, as in api.md 2.2 and 2.5.
const (
	outcomeCompleted         = "completed"
	outcomeInterrupted       = "interrupted"
	outcomeError             = "error"
	failureAgentNotInstalled = "agent_not_installed"
)

// Lines added under a reply.
const (
	lineTruncated   = "_(reply cut at 16,384 characters; the full text is not available)_"
	lineInterrupted = "The turn was interrupted (the workspace was paused, archived or stopped, or hit its time limit)."
	lineFailed      = "The agent failed"
)

// Reply is one finished agent turn as the thread shows it.
type Reply struct {
	Text           string // the reply, plain text as the agent wrote it (not escaped)
	Outcome        string // completed | interrupted | error
	Truncated      bool   // the hub cut the reply at 16,384 characters
	FailureCode    string // agent_not_installed | agent_error, or "" (outcome error only)
	FailureMessage string // the agent's error, at most 1,200 characters (api.md 2.5)
	Agent          string // the agent that ran the turn, named in the not-installed line
}

var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// EscapeMrkdwn escapes Slack's three control characters (& < >) so that text shows as
// written: no links, mentions or @channel pings are made from it. Nothing else is
// changed; *bold*, _italic_ and ``` code still format.
func EscapeMrkdwn(s string) string { return mrkdwnEscaper.Replace(s) }

// discordMarkdown are the characters Discord's markdown gives meaning to outside
// code: emphasis, spoilers, quotes, headings, lists, masked links, mentions and
// custom emoji (<@id>, <:name:id>).
const discordMarkdown = "\\*_~`|>#-[]()<:"

// EscapeDiscordMarkdown backslash-escapes Discord's markdown characters so that text
// shows as written: no formatting, masked links or mentions are made from it.
func EscapeDiscordMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(discordMarkdown, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// discordLine are the characters escapeDiscordLine escapes: fewer than
// EscapeDiscordMarkdown's, so names in the bot's own lines read as they always have.
var discordLine = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`, `>`, `\>`,
	`[`, `\[`, `]`, `\]`, `#`, `\#`)

// escapeDiscordLine keeps text from people from formatting in a line of the bot's own
// (no line pings anyone: every post allows no mentions).
func escapeDiscordLine(s string) string { return discordLine.Replace(s) }

// FormatReply gives the posts for a finished turn, in order: the escaped reply text split
// to limit runes, then (on the last post, or on one more post when it does not fit) the
// truncation line and the outcome lines. An empty reply of a failed or interrupted turn
// shows only those lines.
func (p Platform) FormatReply(r Reply, limit int) []string {
	limit = max(limit, minSplitMax)
	body := p.escape(trimReply(r.Text))
	footer := p.replyFooter(r)
	if footer == "" {
		return Split(body, limit)
	}
	tail := Split(footer, limit)
	if strings.TrimSpace(body) == "" {
		return tail
	}
	parts := Split(body, limit)
	if len(tail) == 1 {
		last := parts[len(parts)-1] + "\n\n" + tail[0]
		if utf8.RuneCountInString(last) <= limit {
			parts[len(parts)-1] = last
			return parts
		}
	}
	return append(parts, tail...)
}

// trimReply drops trailing whitespace and leading blank lines (indentation of the first
// line with text is kept).
func trimReply(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || strings.TrimSpace(s[:i]) != "" {
			return s
		}
		s = s[i+1:]
	}
}

// replyFooter is the lines shown under the reply, escaped, or "" for a complete reply.
func (p Platform) replyFooter(r Reply) string {
	var lines []string
	if r.Truncated {
		lines = append(lines, lineTruncated)
	}
	switch r.Outcome {
	case outcomeCompleted, "":
	case outcomeInterrupted:
		lines = append(lines, p.Warning+" "+lineInterrupted)
	case outcomeError:
		msg := strings.TrimSpace(r.FailureMessage)
		if msg == "" {
			lines = append(lines, p.Cross+" "+lineFailed+".")
		} else {
			lines = append(lines, p.Cross+" "+lineFailed+": "+p.escape(cutRunes(msg, maxFailureRunes)))
		}
		if r.FailureCode == failureAgentNotInstalled {
			prog := "The agent's program"
			if a := strings.TrimSpace(r.Agent); a != "" {
				prog += " (" + p.escape(a) + ")"
			}
			lines = append(lines, prog+" is not installed on the workspace machine; ask the hub operator.")
		}
	default:
		lines = append(lines, p.Warning+" The turn ended with an unknown outcome ("+p.escape(cutRunes(r.Outcome, 40))+").")
	}
	return strings.Join(lines, "\n")
}

// cutRunes shortens s to at most n runes, marking a cut with "…" (within the n).
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
