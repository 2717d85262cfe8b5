package chat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

func TestStatusText(t *testing.T) {
	running := core.ChatStatusView{Elapsed: 72 * time.Second, Steps: 5,
		Recent:  []core.ChatStep{{Tool: "Bash", Summary: "go test ./..."}, {Tool: "Edit", Summary: "a`b.go"}, {Tool: "Read"}},
		Waiting: &core.ChatStep{Tool: "Bash", Summary: "rm -rf build\nand more"}}
	for _, c := range []struct {
		p    Platform
		v    core.ChatStatusView
		want string
	}{
		{Slack, running, ":hourglass_flowing_sand: Working… 1m12s · 5 steps\n• Bash `go test ./...`\n• Edit `a'b.go`\n• Read\n:lock: Waiting for approval: Bash `rm -rf build and more`"},
		{Discord, core.ChatStatusView{Elapsed: 3 * time.Second}, "⏳ Working… 3s"},
		{Slack, core.ChatStatusView{Finished: true, Outcome: core.OutcomeCompleted, Elapsed: 3725 * time.Second, Steps: 1}, ":white_check_mark: Finished in 1h02m · 1 step"},
		{Discord, core.ChatStatusView{Finished: true, Outcome: core.OutcomeInterrupted, Elapsed: 20 * time.Second, Steps: 2}, "⏹️ Stopped after 20s · 2 steps"},
		{Slack, core.ChatStatusView{Finished: true, Outcome: core.OutcomeError, Elapsed: 5 * time.Second, Steps: 0}, ":warning: Failed after 5s"},
		{Slack, core.ChatStatusView{Elapsed: time.Second, Recent: []core.ChatStep{{Tool: "<b>", Summary: "x"}}}, ":hourglass_flowing_sand: Working… 1s\n• &lt;b&gt; `x`"},
	} {
		if got := c.p.StatusText(c.v); got != c.want {
			t.Errorf("StatusText(%+v):\n got %q\nwant %q", c.v, got, c.want)
		}
	}
}

func TestApprovalWords(t *testing.T) {
	if got, want := Slack.ApprovalText("Bash", "rm -rf build"), ":lock: The agent asks to run Bash `rm -rf build`. Allow it?"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	mention := func(id string) string { return "<@" + id + ">" }
	for _, c := range []struct {
		status core.ApprovalStatus
		by     string
		want   string
	}{
		{core.ApprovalAllowed, "discord:U1", "✅ Allowed by <@U1>"},
		{core.ApprovalDenied, "api", "❌ Denied by the API"},
		{core.ApprovalDenied, "slack:U2", "❌ Denied by someone on slack"},
		{core.ApprovalTimedOut, "", "❌ Denied: nobody answered in time"},
		{core.ApprovalClosed, "", "⏹️ The turn ended before a decision"},
	} {
		got := Discord.ApprovalDecided("Bash", "ls", c.status, DecidedBy(c.by, core.PlatformDiscord, mention))
		if want := "🔒 The agent asked to run Bash `ls`.\n" + c.want; got != want {
			t.Errorf("%s by %q: got %q, want %q", c.status, c.by, got, want)
		}
	}
}

// An approval question shows what it asks about whole, never cut like a step: a
// dangerous tail after 400 spaces is there, backticks and newlines are shown as they
// are (in a code block); one too long to show says so and offers no Allow.
func TestApprovalQuestionsShowTheWholeCommand(t *testing.T) {
	tail := "echo safe" + strings.Repeat(" ", 400) + "; touch /workspace/tail-ran"
	long := strings.Repeat("x", maxApprovalRunes+1)
	tests := []struct {
		name, summary, want string
		whole               bool
	}{
		{"short", "rm -rf build", "🔒 The agent asks to run Bash `rm -rf build`. Allow it?", true},
		{"tail after spaces", tail, "🔒 The agent asks to run Bash:\n```\n" + tail + "\n```\nAllow it?", true},
		{"backticks", "echo `rm -rf ~`", "🔒 The agent asks to run Bash:\n```\necho `rm -rf ~`\n```\nAllow it?", true},
		{"newline", "cd x\nrm -rf y", "🔒 The agent asks to run Bash:\n```\ncd x\nrm -rf y\n```\nAllow it?", true},
		{"too long", long, fmt.Sprintf("🔒 The agent asks to run Bash (%d characters, too long to show here; read it whole and decide through the API). Deny it here, or allow it through the API.", len(long)), false},
		{"a fence inside", "cat <<'X'\n```\nX", "🔒 The agent asks to run Bash (15 characters, too long to show here; read it whole and decide through the API). Deny it here, or allow it through the API.", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Discord.ApprovalText("Bash", tt.summary); got != tt.want {
				t.Errorf("expected %q, got %q", tt.want, got)
			}
			if got := ApprovalShownWhole(tt.summary); got != tt.whole {
				t.Errorf("expected shown whole: %v, got %v", tt.whole, got)
			}
			if got := Slack.ApprovalDecided("Bash", tt.summary, core.ApprovalDenied, ""); tt.whole && !strings.Contains(got, tt.summary) {
				t.Errorf("expected the decided question to show the whole summary, got %q", got)
			}
		})
	}
}
