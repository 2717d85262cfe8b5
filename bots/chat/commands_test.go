package chat

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// threads answers the commands as core would, from what the test gives it.
type threads struct {
	project *core.Project
	status  *core.ChatStatus
	archive *core.Workspace
	pull    *core.Workspace
	err     error
	follow  []bool // SetFollow's calls
}

func (t *threads) UseProject(context.Context, *core.ChatSession, string) (*core.Project, error) {
	return t.project, t.err
}

func (t *threads) SetFollow(_ context.Context, _ *core.ChatSession, all bool) error {
	t.follow = append(t.follow, all)
	return t.err
}

func (t *threads) ThreadStatus(context.Context, *core.ChatSession) (*core.ChatStatus, error) {
	return t.status, t.err
}

func (t *threads) ArchiveThread(context.Context, *core.ChatSession) (*core.Workspace, error) {
	return t.archive, t.err
}

func (t *threads) ThreadPullRequest(context.Context, *core.ChatSession) (*core.Workspace, error) {
	return t.pull, t.err
}

func handlingOn(p Platform) *Handling {
	return &Handling{Words: p, Self: "U0BOT", Retryable: Retryable, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

var place = core.ChatPlace{Platform: "test", TeamID: "T1", ChannelID: "C1", ThreadID: "1.2"}

// say runs text as a command and returns what was said (one notice at most).
func say(t *testing.T, p Platform, svc Threads, text string) (handled bool, said string, err error) {
	t.Helper()
	h := handlingOn(p)
	handled, err = h.Command(context.Background(), svc, &core.ChatSession{Place: place}, text)
	switch len(h.Said) {
	case 0:
	case 1:
		if n := h.Said[0]; n.Place != place || n.Kind != core.NoticeText {
			t.Fatalf("%q: expected a text notice in the session's place, got %+v", text, n)
		}
		said = h.Said[0].Text
	default:
		t.Fatalf("%q: expected one answer, got %+v", text, h.Said)
	}
	return handled, said, err
}

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		text, word, arg string
		ok              bool
	}{
		{"help", "help", "", true},
		{"HELP", "help", "", true},
		{"help me", "", "", false},
		{"status", "status", "", true},
		{"status of the build", "", "", false},
		{"archive", "archive", "", true},
		{"use web-app", "use", "web-app", true},
		{"Use  web-app ", "use", "web-app", true},
		{"use", "", "", false},
		{"use two words", "", "", false},
		{"follow all", "follow", "all", true},
		{"follow MENTIONS", "follow", "mentions", true},
		{"follow", "", "", false},
		{"follow everything", "", "", false},
		{"write hello", "", "", false},
		{"", "", "", false},
	} {
		word, arg, ok := parseCommand(c.text)
		if ok != c.ok || (ok && (word != c.word || arg != c.arg)) {
			t.Errorf("parseCommand(%q): expected %q %q %v, got %q %q %v", c.text, c.word, c.arg, c.ok, word, arg, ok)
		}
	}
}

// The answers on both platforms, with people's text (a project's name, a model) that
// would format, link or end a code span if it were shown raw. Each platform escapes
// it as its markup needs, in the same places.
func TestCommandAnswersShowPeoplesTextAsWritten(t *testing.T) {
	const model = "m`**x**<!here>_y_"
	ws := &core.Workspace{ID: "ws_1", State: core.StateReady, Branch: "feat/x", Agent: "agent_1", Model: model, LastTurnID: "t1"}
	opened := *ws
	opened.Pull = core.WorkspacePull{Number: 12, URL: "https://github.com/acme/web/pull/12", State: core.PullRequestOpen}
	svc := &threads{project: &core.Project{DisplayName: "<!channel> *web*_[x]"}, archive: ws, pull: &opened,
		status: &core.ChatStatus{Workspace: ws, Project: &core.Project{DisplayName: "<!channel> *web*_[x]"}, Queued: 2}}
	for _, c := range []struct {
		p          Platform
		text, want string
	}{
		{Slack, "status", "Workspace `ws_1` is *ready* (agent idle).\nProject *&lt;!channel&gt; *web*_[x]*, branch `feat/x`.\n" +
			"Agent Claude Code (agent_1), model `m'**x**&lt;!here&gt;_y_`.\nQueued messages: 2."},
		{Discord, "status", "Workspace `ws_1` is **ready** (agent idle).\nProject **<!channel\\> \\*web\\*\\_\\[x\\]**, branch `feat/x`.\n" +
			"Agent Claude Code (agent_1), model `m'**x**<!here>_y_`.\nQueued messages: 2."},
		{Slack, "use web", "New workspaces started in this channel will use project *&lt;!channel&gt; *web*_[x]*."},
		{Discord, "use web", "New workspaces started in this channel will use project **<!channel\\> \\*web\\*\\_\\[x\\]**."},
		{Slack, "follow all", "I'll take every reply in this thread as a message for the agent."},
		{Discord, "follow all", "I'll take every message in this thread as a message for the agent."},
		{Slack, "follow mentions", "I'll only take messages that mention <@U0BOT> in this thread."},
		{Discord, "follow mentions", "I'll only take messages that mention <@U0BOT> in this thread."},
		{Slack, "archive", "Archiving workspace `ws_1` (branch `feat/x`). Start a new thread to work again."},
		{Discord, "archive", "Archiving workspace `ws_1` (branch `feat/x`). Start a new thread to work again."},
		{Slack, "pr", "Pull request #12 (open): https://github.com/acme/web/pull/12"},
		{Discord, "pr", "Pull request #12 (open): https://github.com/acme/web/pull/12"},
	} {
		handled, said, err := say(t, c.p, svc, c.text)
		if !handled || err != nil || said != c.want {
			t.Errorf("%s on %s: expected %q, got %v %v %q", c.text, c.p.Team, c.want, handled, err, said)
		}
	}
	// Whatever the platform, the model stays inside one code span: nothing it holds
	// can end the span and format the rest of the line.
	for _, p := range []Platform{Slack, Discord} {
		_, said, _ := say(t, p, svc, "status")
		line := strings.Split(said, "\n")[2]
		if n := strings.Count(line, "`"); n != 2 || !strings.HasSuffix(line, "`.") {
			t.Errorf("%s: expected the model in one code span, got %q", p.Team, line)
		}
	}
}

func TestCommandHelpIsInThePlatformsMarkup(t *testing.T) {
	for _, c := range []struct {
		p    Platform
		want []string
	}{
		{Slack, []string{"post the agent's replies here.", "• <@U0BOT> _what to do_ in a new thread starts a workspace",
			"• <@U0BOT> `follow all` takes every reply in the thread", "• <@U0BOT> `use` _project_ sets"}},
		{Discord, []string{"post the agent's replies there.", "• <@U0BOT> *what to do* in a channel starts a workspace in a new thread",
			"`/workspace` does the same.", "• <@U0BOT> `follow all` takes every message in the thread", "• <@U0BOT> `use` *project* sets"}},
	} {
		_, said, _ := say(t, c.p, &threads{}, "help")
		if said != c.p.Help("U0BOT") || strings.Count(said, "\n") != 9 {
			t.Errorf("%s: expected the ten lines of help, got %q", c.p.Team, said)
		}
		for _, w := range c.want {
			if !strings.Contains(said, w) {
				t.Errorf("%s: expected the help to say %q, got %q", c.p.Team, w, said)
			}
		}
	}
}

// pr before the branch is pushed says the next push opens it; a forge's refusal is
// said in its words.
func TestThePRCommand(t *testing.T) {
	ws := &core.Workspace{ID: "ws_1", Branch: "feat/x"}
	if _, said, _ := say(t, Slack, &threads{pull: ws}, "pr"); said != "Asked for: the next push of branch `feat/x` opens a pull request, and I'll link it here." {
		t.Errorf("expected the pending answer, got %q", said)
	}
	refused := &threads{err: core.Errorf(core.CodePullRequestRefused, "Resource not accessible by integration (HTTP 403)")}
	if _, said, _ := say(t, Discord, refused, "pr"); said != "I couldn't open a pull request: Resource not accessible by integration (HTTP 403)" {
		t.Errorf("expected the forge's words, got %q", said)
	}
}

// A refusal is said in the platform's words; an error that may pass is returned for
// the inbox to retry, and nothing is said; a message for the agent is left alone.
func TestCommandRefusalsAndMessages(t *testing.T) {
	refused := &threads{err: core.Errorf(core.CodeChatProjectUnknown, "no such project")}
	handled, said, err := say(t, Discord, refused, "use nosuch")
	if !handled || err != nil || said != Discord.Refusal(refused.err) {
		t.Errorf("expected the refusal said, got %v %v %q", handled, err, said)
	}
	busy := &threads{err: core.ErrUnavailable}
	if handled, said, err = say(t, Slack, busy, "status"); !handled || err != core.ErrUnavailable || said != "" {
		t.Errorf("expected the error returned and nothing said, got %v %v %q", handled, err, said)
	}
	svc := &threads{}
	if handled, said, err = say(t, Slack, svc, "status of the build"); handled || err != nil || said != "" || svc.follow != nil {
		t.Errorf("expected a message for the agent left alone, got %v %v %q", handled, err, said)
	}
	if _, _, err = say(t, Slack, svc, "follow ALL"); err != nil || len(svc.follow) != 1 || !svc.follow[0] {
		t.Errorf("expected follow all to set following, got %v %v", err, svc.follow)
	}
}
