package chat

import (
	"encoding/json"
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
		{Slack, core.ChatStatusView{Script: core.ScriptSetup, Elapsed: 14 * time.Second, Output: "added 312 <packages>"},
			":hourglass_flowing_sand: Setting up the environment… 14s\n`added 312 &lt;packages&gt;`"},
		{Discord, core.ChatStatusView{Script: core.ScriptUpdate, Finished: true, Outcome: core.OutcomeCompleted, Elapsed: 4 * time.Second},
			"✅ Updating the environment: done in 4s"},
		{Slack, core.ChatStatusView{Script: core.ScriptSetup, Finished: true, Outcome: core.OutcomeError, Elapsed: 61 * time.Second},
			":warning: Setting up the environment: failed after 1m01s (the workspace's page has its output)"},
	} {
		if got := c.p.StatusText(c.v); got != c.want {
			t.Errorf("StatusText(%+v):\n got %q\nwant %q", c.v, got, c.want)
		}
	}
}

func TestApprovalWords(t *testing.T) {
	bash := func(command string) ApprovalAsk {
		in, _ := json.Marshal(map[string]string{"command": command})
		return ApprovalAsk{ApprovalID: "apr_1", Tool: "Bash", Input: in}
	}
	if got, want := Slack.Question(bash("rm -rf build"), 2900).Text, ":lock: The agent asks to run Bash:\n```\nrm -rf build\n```\nAllow it?"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// What an agent supplies shows as written: no pings, mentions, links or markup.
	for _, c := range []struct {
		p                   Platform
		tool, command, want string
	}{
		{Slack, "Bash", "echo <!channel> <@U0123> <http://evil.example|docs> & <#C1>",
			":lock: The agent asks to run Bash:\n```\necho &lt;!channel&gt; &lt;@U0123&gt; &lt;http://evil.example|docs&gt; &amp; &lt;#C1&gt;\n```\nAllow it?"},
		{Slack, "<!here>", "ls", ":lock: The agent asks to run &lt;!here&gt;:\n```\nls\n```\nAllow it?"},
		{Discord, "**Bash** [docs](http://evil.example) <@1234>", "echo ``` **not bold** <@1234>",
			`🔒 The agent asks to run \*\*Bash\*\* \[docs\]\(http\://evil.example\) \<@1234\>:` + "\n```\necho `\u200b`` **not bold** <@1234>\n```\nAllow it?"},
	} {
		a := bash(c.command)
		a.Tool = c.tool
		if got := c.p.Question(a, 1900).Text; got != c.want {
			t.Errorf("Question(%q, %q) on %s:\n got %q\nwant %q", c.tool, c.command, c.p.Team, got, c.want)
		}
	}
	status := Slack.StatusText(core.ChatStatusView{Recent: []core.ChatStep{{Tool: "Bash", Summary: "curl <https://x.example|y>"}},
		Waiting: &core.ChatStep{Tool: "Bash", Summary: "say <!channel>"}})
	if want := "• Bash `curl &lt;https://x.example|y&gt;`\n:lock: Waiting for approval: Bash `say &lt;!channel&gt;`"; !strings.HasSuffix(status, want) {
		t.Errorf("expected the status's steps escaped, got %q", status)
	}
	for _, c := range []struct {
		status   core.ApprovalStatus
		by, name string
		want     string
	}{
		{core.ApprovalAllowed, "discord:U1", "Ada", "✅ Allowed by <@U1>"},
		{core.ApprovalDenied, "api", "", "❌ Denied by the API"},
		{core.ApprovalDenied, "api", "ci *nightly*", `❌ Denied by the API key ci \*nightly\*`},
		{core.ApprovalAllowed, "app:mem_1", "Ada Lovelace", "✅ Allowed by Ada Lovelace in the app"},
		{core.ApprovalDenied, "slack:U2", "", "❌ Denied by someone on slack"},
		{core.ApprovalDenied, "slack:U2", "Grace", "❌ Denied by Grace on slack"},
		{core.ApprovalTimedOut, "", "", "❌ Denied: nobody answered in time"},
		{core.ApprovalClosed, "", "", "⏹️ The turn ended before a decision"},
	} {
		q := Discord.Question(bash("ls"), 1900).Text
		got := Discord.Decided(q, c.status, Discord.DecidedBy(c.by, c.name))
		if want := q + "\n" + c.want; got != want {
			t.Errorf("%s by %q: got %q, want %q", c.status, c.by, got, want)
		}
	}
}
