package chat

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeMrkdwn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain *bold* _it_ `code`", "plain *bold* _it_ `code`"},
		{"a & b", "a &amp; b"},
		{"<@U123> <!channel> <https://x|y>", "&lt;@U123&gt; &lt;!channel&gt; &lt;https://x|y&gt;"},
		{"&amp; stays literal", "&amp;amp; stays literal"},
		{"if a<b && c>d {}", "if a&lt;b &amp;&amp; c&gt;d {}"},
		{"ünïcödé 😀 >", "ünïcödé 😀 &gt;"},
	}
	for _, tt := range tests {
		if got := EscapeMrkdwn(tt.in); got != tt.want {
			t.Errorf("EscapeMrkdwn(%q): expected %q, got %q", tt.in, tt.want, got)
		}
	}
}

func TestFormatReply(t *testing.T) {
	const notInstalled = "is not installed on the workspace machine; ask the hub operator."
	tests := []struct {
		name       string
		r          Reply
		max        int
		want       []string // exact, when set
		contain    []string // in the joined output
		notContain []string
		parts      int // exact count, when > 0
	}{
		{
			name: "completed", r: Reply{Text: "Done: a < b & c > d", Outcome: "completed"},
			want: []string{"Done: a &lt; b &amp; c &gt; d"},
		},
		{
			name: "completed, text trimmed", r: Reply{Text: "\n\n  \nDone.\n\n", Outcome: "completed"},
			want: []string{"Done."},
		},
		{
			name: "empty completed", r: Reply{Outcome: "completed"},
			want: []string{"(empty reply)"},
		},
		{
			name: "interrupted", r: Reply{Text: "Partial work.", Outcome: "interrupted"},
			want: []string{"Partial work.\n\n" + slackInterrupted},
		},
		{
			name: "error with message", r: Reply{Text: "Trying.", Outcome: "error", FailureCode: "agent_error", FailureMessage: "exit 2: <oops> & more", Agent: "agent_2"},
			want: []string{"Trying.\n\n:x: The agent failed: exit 2: &lt;oops&gt; &amp; more"},
		},
		{
			name: "not installed, empty text", r: Reply{Outcome: "error", FailureCode: "agent_not_installed", FailureMessage: "claude: command not found", Agent: "agent_1"},
			want: []string{":x: The agent failed: claude: command not found\nThe agent's program (agent_1) " + notInstalled},
		},
		{
			name: "not installed, no agent, no message", r: Reply{Outcome: "error", FailureCode: "agent_not_installed"},
			want: []string{":x: The agent failed.\nThe agent's program " + notInstalled},
		},
		{
			name: "truncated and completed", r: Reply{Text: "Long text", Outcome: "completed", Truncated: true},
			want: []string{"Long text\n\n" + lineTruncated},
		},
		{
			name: "truncated and interrupted", r: Reply{Text: "Long text", Outcome: "interrupted", Truncated: true},
			want: []string{"Long text\n\n" + lineTruncated + "\n" + slackInterrupted},
		},
		{
			name: "unknown outcome", r: Reply{Text: "x", Outcome: "<weird>"},
			want: []string{"x\n\n:warning: The turn ended with an unknown outcome (&lt;weird&gt;)."},
		},
		{
			name: "no failure lines when completed", r: Reply{Text: "ok", Outcome: "completed", FailureCode: "agent_error", FailureMessage: "stale"},
			want: []string{"ok"},
		},
		{
			name: "failure message cut to 1,200", r: Reply{Text: "t", Outcome: "error", FailureCode: "agent_error", FailureMessage: strings.Repeat("e", 1300)},
			contain:    []string{": " + strings.Repeat("e", 1199) + "…"},
			notContain: []string{strings.Repeat("e", 1200)},
		},
		{
			name: "footer does not fit: one more part", r: Reply{Text: strings.Repeat("a", 3890), Outcome: "interrupted"},
			want: []string{strings.Repeat("a", 3890), slackInterrupted},
		},
		{
			name: "footer after an unclosed code block stays outside it", r: Reply{Text: "```\ncode", Outcome: "interrupted"},
			want: []string{"```\ncode\n```\n\n" + slackInterrupted},
		},
		{
			name: "escaped failure message longer than a post", max: 300,
			r: Reply{Text: "t", Outcome: "error", FailureCode: "agent_error", FailureMessage: strings.Repeat("<", 1200)},
			// "t"; then 22 + 1,200 x 4 runes of footer: 298 (":x: ... " and 69 x "&lt;",
			// never cutting one), then 16 parts of at most 300.
			parts: 18,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = maxPostChars
			}
			got := slackFormat(tt.r, max)
			if tt.max == 0 {
				if direct := slackFormat(tt.r); fmt.Sprintf("%q", direct) != fmt.Sprintf("%q", got) {
					t.Fatalf("formatReply: expected %q, got %q", got, direct)
				}
			}
			if tt.want != nil && fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Fatalf("expected %q, got %q", tt.want, got)
			}
			joined := strings.Join(got, "\n")
			for _, s := range tt.contain {
				if !strings.Contains(joined, s) {
					t.Fatalf("expected the posts to contain %q, got %q", abbrev(s), abbrev(joined))
				}
			}
			for _, s := range tt.notContain {
				if strings.Contains(joined, s) {
					t.Fatalf("expected the posts not to contain %q, got %q", abbrev(s), abbrev(joined))
				}
			}
			if tt.parts > 0 && len(got) != tt.parts {
				t.Fatalf("expected %d parts, got %d", tt.parts, len(got))
			}
			for k, p := range got {
				if n := utf8.RuneCountInString(p); n > max || strings.TrimSpace(p) == "" {
					t.Fatalf("part %d: expected 1..%d visible runes, got %d: %q", k, max, n, abbrev(p))
				}
				if n := fenceToggles(p); n%2 != 0 {
					t.Fatalf("part %d: expected balanced fences, got %d", k, n)
				}
			}
		})
	}
}

// TestFormatReplyLines checks, for every combination, that each line is present exactly
// when it should be.
func TestFormatReplyLines(t *testing.T) {
	for _, outcome := range []string{"completed", "interrupted", "error"} {
		for _, code := range []string{"", "agent_error", "agent_not_installed"} {
			for _, truncated := range []bool{false, true} {
				for _, text := range []string{"", "Some reply.", prose(5000)} {
					r := Reply{Text: text, Outcome: outcome, Truncated: truncated, FailureCode: code, FailureMessage: "boom", Agent: "agent_3"}
					name := fmt.Sprintf("%s/%s/%v/%d", outcome, code, truncated, len(text))
					t.Run(name, func(t *testing.T) {
						parts := slackFormat(r)
						joined := strings.Join(parts, "\n")
						check := func(what, line string, want bool) {
							if got := strings.Contains(joined, line); got != want {
								t.Fatalf("%s line: expected present=%v, got present=%v", what, want, got)
							}
						}
						check("interrupted", slackInterrupted, outcome == "interrupted")
						check("failure", ":x: The agent failed: boom", outcome == "error")
						check("not installed", "The agent's program (agent_3) is not installed", outcome == "error" && code == "agent_not_installed")
						check("truncation", lineTruncated, truncated)
						check("empty", emptyReplyText, text == "" && !truncated && outcome == "completed")
						wantLast := ""
						switch {
						case outcome == "error" && code == "agent_not_installed":
							wantLast = "ask the hub operator."
						case outcome == "error":
							wantLast = ":x: The agent failed: boom"
						case outcome == "interrupted":
							wantLast = slackInterrupted
						case truncated:
							wantLast = lineTruncated
						}
						if last := parts[len(parts)-1]; !strings.HasSuffix(last, wantLast) {
							t.Fatalf("expected the last part to end with %q, got %q", wantLast, abbrev(last))
						}
					})
				}
			}
		}
	}
}

// maxPostChars is Slack's post size (bots/slack), the size these tests were written for.
const maxPostChars = 3900

func slackFormat(r Reply, limit ...int) []string {
	if len(limit) == 1 {
		return Slack.FormatReply(r, limit[0])
	}
	return Slack.FormatReply(r, maxPostChars)
}

// slackInterrupted is the interrupted line as Slack shows it.
const slackInterrupted = ":warning: " + lineInterrupted
