package slack

import "github.com/wshub/wshub/bots/chat"

// maxPostChars bounds the text of one post, in runes. Slack recommends keeping message
// text under 4,000 characters; clients cut or split longer text on their own.
const maxPostChars = 3900

// formatReply gives the Slack posts for a finished turn (bots/chat formats for both bots).
func formatReply(r chat.Reply) []string { return chat.Slack.FormatReply(r, maxPostChars) }

// splitForSlack splits text into posts of at most max runes (chat.Split).
func splitForSlack(text string, max int) []string { return chat.Split(text, max) }

// escapeMrkdwn escapes Slack's control characters in text shown as written.
func escapeMrkdwn(s string) string { return chat.EscapeMrkdwn(s) }
