package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// command runs a bot command (`help`, `use <project>`, `follow all|mentions`,
// `status`, `archive`); handled is false when text is a message for the agent.
func (h *handling) command(ctx context.Context, sess *core.ChatSession, text string) (handled bool, err error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return false, nil
	}
	b, self := h.Bot, h.self
	word := strings.ToLower(fields[0])
	rest := strings.TrimSpace(strings.TrimPrefix(text, fields[0]))
	place := sess.Place
	switch {
	case word == "help" && rest == "":
		h.say(place, helpText(self))
		return true, nil
	case word == "use" && rest != "" && len(fields) == 2:
		p, err := b.svc.UseProject(ctx, sess, rest)
		if err != nil {
			return true, h.refuse(place, err)
		}
		h.say(place, fmt.Sprintf("New workspaces started in this channel will use project *%s*.", chat.EscapeMrkdwn(p.DisplayName)))
		return true, nil
	case word == "follow" && (strings.EqualFold(rest, "all") || strings.EqualFold(rest, "mentions")):
		all := strings.EqualFold(rest, "all")
		if err := b.svc.SetFollow(ctx, sess, all); err != nil {
			return true, h.refuse(place, err)
		}
		if all {
			h.say(place, "I'll take every reply in this thread as a message for the agent.")
			return true, nil
		}
		h.say(place, fmt.Sprintf("I'll only take messages that mention <@%s> in this thread.", self))
		return true, nil
	case word == "status" && rest == "":
		st, err := b.svc.ThreadStatus(ctx, sess)
		if err != nil {
			return true, h.refuse(place, err)
		}
		h.say(place, statusText(st))
		return true, nil
	case word == "archive" && rest == "":
		ws, err := b.svc.ArchiveThread(ctx, sess)
		if err != nil {
			return true, h.refuse(place, err)
		}
		h.say(place, fmt.Sprintf("Archiving workspace `%s` (branch `%s`). Start a new thread to work again.", ws.ID, ws.Branch))
		return true, nil
	}
	return false, nil
}

func helpText(self string) string {
	m := "<@" + self + ">"
	return strings.Join([]string{
		"I start coding workspaces from threads and post the agent's replies here.",
		"• " + m + " _what to do_ in a new thread starts a workspace; files on the message are attached.",
		"• " + m + " _more_ in that thread sends the agent another message.",
		"• " + m + " `follow all` takes every reply in the thread as a message; `follow mentions` undoes it.",
		"• " + m + " `status` shows the workspace's state, branch, agent, model and queued messages.",
		"• " + m + " `archive` archives the thread's workspace.",
		"• " + m + " `use` _project_ sets this channel's project for new workspaces.",
		"• " + m + " `help` shows this.",
	}, "\n")
}

func statusText(st *core.ChatStatus) string {
	ws := st.Workspace
	return fmt.Sprintf("Workspace `%s` is *%s* (agent %s).\nProject *%s*, branch `%s`.\nAgent %s, model `%s`.\nQueued messages: %d.",
		ws.ID, ws.State, ws.AgentStatus(), chat.EscapeMrkdwn(st.Project.DisplayName), ws.Branch, chat.AgentName(ws.Agent),
		chat.EscapeMrkdwn(ws.Model), st.Queued)
}
