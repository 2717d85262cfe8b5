package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/wshub/wshub/core"
)

// The bot commands, the same on every platform: a mention of the bot followed by
// `help`, `use <project>`, `follow all|mentions`, `status`, `pr`, `archive`, `schedules`
// or `schedule ...` (schedules.go). Each platform
// shows the answers in its own markup (Platform.Markup).

// Threads is what the commands ask of core's chat use cases.
type Threads interface {
	UseProject(ctx context.Context, sess *core.ChatSession, name string) (*core.Project, error)
	SetFollow(ctx context.Context, sess *core.ChatSession, all bool) error
	ThreadStatus(ctx context.Context, sess *core.ChatSession) (*core.ChatStatus, error)
	ArchiveThread(ctx context.Context, sess *core.ChatSession) (*core.Workspace, error)
	ThreadPullRequest(ctx context.Context, sess *core.ChatSession) (*core.Workspace, error)
	Schedules
}

// Command runs text as a bot command and says its answer, or its refusal, in the
// session's place; handled is false when text is a message for the agent. err is an
// error worth retrying the event for.
func (h *Handling) Command(ctx context.Context, svc Threads, sess *core.ChatSession, text string) (handled bool, err error) {
	word, arg, ok := parseCommand(text)
	if !ok {
		return false, nil
	}
	answer, err := h.run(ctx, svc, sess, word, arg)
	if err != nil {
		return true, h.Refuse(sess.Place, err)
	}
	h.Say(sess.Place, answer)
	return true, nil
}

// parseCommand reads text as a command: its word, lower-cased, and its argument.
// ok is false when text is not one: an unknown word, or a known one with other words
// after it (`status of the build` is a message for the agent).
func parseCommand(text string) (word, arg string, ok bool) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return "", "", false
	}
	word = strings.ToLower(fields[0])
	rest := strings.TrimSpace(strings.TrimPrefix(text, fields[0]))
	switch word {
	case "help", "status", "archive", "pr", "schedules":
		return word, "", rest == ""
	case "schedule":
		return word, rest, scheduleCommand(rest)
	case "use":
		return word, rest, len(fields) == 2
	case "follow":
		arg = strings.ToLower(rest)
		return word, arg, arg == "all" || arg == "mentions"
	}
	return "", "", false
}

// run does a parsed command through core and words its answer.
func (h *Handling) run(ctx context.Context, svc Threads, sess *core.ChatSession, word, arg string) (string, error) {
	p := h.Words
	switch word {
	case "help":
		return p.Help(h.Self), nil
	case "use":
		proj, err := svc.UseProject(ctx, sess, arg)
		if err != nil {
			return "", err
		}
		return "New workspaces started in this channel will use project " + p.Bold(p.Literal(proj.DisplayName)) + ".", nil
	case "follow":
		if err := svc.SetFollow(ctx, sess, arg == "all"); err != nil {
			return "", err
		}
		if arg == "all" {
			return "I'll take every " + p.Followed + " in this thread as a message for the agent.", nil
		}
		return "I'll only take messages that mention " + Mention(h.Self) + " in this thread.", nil
	case "status":
		st, err := svc.ThreadStatus(ctx, sess)
		if err != nil {
			return "", err
		}
		return p.ThreadStatus(st), nil
	case "pr":
		ws, err := svc.ThreadPullRequest(ctx, sess)
		if err != nil {
			return "", err
		}
		return p.PullRequestAnswer(ws), nil
	case "schedules", "schedule":
		return h.schedule(ctx, svc, sess, word, arg)
	case "archive":
		ws, err := svc.ArchiveThread(ctx, sess)
		if err != nil {
			return "", err
		}
		return "Archiving workspace " + p.Code(ws.ID) + " (branch " + p.Code(ws.Branch) + "). Start a new thread to work again.", nil
	}
	return "", fmt.Errorf("chat: no command %q", word) // parseCommand gives none other
}

// Help says what the bot does and which commands it takes; self is the bot's user id.
func (p Platform) Help(self string) string {
	m := "• " + Mention(self) + " "
	return strings.Join([]string{
		"I start coding workspaces from threads and post the agent's replies " + p.RepliesGo + ".",
		m + p.Italic("what to do") + " " + p.Starts,
		m + p.Italic("more") + " in that thread sends the agent another message.",
		m + "`follow all` takes every " + p.Followed + " in the thread as a message; `follow mentions` undoes it.",
		m + "`status` shows the workspace's state, branch, agent, model and queued messages.",
		m + "`pr` opens a pull request from the workspace's branch (or links the one open).",
		m + "`archive` archives the thread's workspace.",
		m + "`use` " + p.Italic("project") + " sets this channel's project for new workspaces.",
		m + "`schedule 0 9 * * 1 in Europe/Paris:` " + p.Italic("what to do") + " does it every Monday at 9, Paris time, in a new " +
			"workspace of this channel's project; `schedules` lists them; `schedule run|pause|resume|delete` " + p.Italic("id") + " acts on one.",
		m + "`help` shows this.",
	}, "\n")
}

// ThreadStatus is the `status` answer: the thread's workspace, its project, agent and
// model, and the messages waiting. The project's name and the model are people's
// text, shown as written.
func (p Platform) ThreadStatus(st *core.ChatStatus) string {
	ws := st.Workspace
	s := fmt.Sprintf("Workspace %s is %s (agent %s).\nProject %s, branch %s.\nAgent %s, model %s.\nQueued messages: %d.",
		p.Code(ws.ID), p.Bold(string(ws.State)), ws.AgentStatus(), p.Bold(p.Literal(st.Project.DisplayName)),
		p.Code(ws.Branch), AgentName(ws.Agent), p.Code(ws.Model), st.Queued)
	if pr := ws.Pull.Ref(); pr != nil {
		s += fmt.Sprintf("\nPull request #%d (%s): %s", pr.Number, pr.State, pr.URL)
	}
	return s
}

// PullRequestOffer is said once a workspace's branch is first pushed, on a project
// whose pull requests are off, above the Open pull request button.
func (p Platform) PullRequestOffer(branch string) string {
	return "Branch " + p.Code(branch) + " is pushed. Open a pull request from it?"
}

// PullRequestAnswer is the `pr` answer: the pull request's link, or that the branch's
// next push opens it.
func (p Platform) PullRequestAnswer(ws *core.Workspace) string {
	pr := ws.Pull.Ref()
	if pr == nil {
		return "Asked for: the next push of branch " + p.Code(ws.Branch) + " opens a pull request, and I'll link it here."
	}
	return fmt.Sprintf("Pull request #%d (%s): %s", pr.Number, pr.State, pr.URL)
}
