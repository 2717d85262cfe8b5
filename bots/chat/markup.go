package chat

import "strings"

// Markup is how a platform marks up the bot's own lines, where Slack's mrkdwn and
// Discord's markdown differ.
type Markup struct {
	// Strong and Em wrap bold and italic text: *x* and _x_ on Slack, **x** and *x* on
	// Discord.
	Strong, Em string
	// Literal makes a name from people (a project's, a prompt's first line) show as
	// written in a line of the bot's own, outside code.
	Literal func(string) string
}

// Bold shows s, already marked up, in bold.
func (m Markup) Bold(s string) string { return m.Strong + s + m.Strong }

// Italic shows s, already marked up, in italics.
func (m Markup) Italic(s string) string { return m.Em + s + m.Em }

// Code shows s, from people or agents, as inline code: escaped as the platform reads
// code spans (Slack makes links and mentions of <…> inside them, Discord reads nothing
// there), and with no backtick to end the span early.
func (p Platform) Code(s string) string { return codeSpan(p.escape(s)) }

// Mention is a member's mention, the same on both platforms. Posts allow no pings,
// so a mention only shows who.
func Mention(userID string) string { return "<@" + userID + ">" }

// codeSpan shows s as inline code; backticks inside become ' (a span cannot hold
// them), so nothing in s can end the span.
func codeSpan(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}
