// Package chat holds what the chat front-ends (bots/slack, bots/discord) share above
// core: the words for core's refusal codes and for failed workspaces, agent names, the
// bot commands, and the posting of replies and notices. Each bot keeps only its
// platform's wire format; it calls core only.
package chat

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wshub/wshub/core"
)

// Platform is what the words need to know of a chat platform.
type Platform struct {
	// Name is the platform as core names it (core.PlatformSlack, core.PlatformDiscord).
	Name string
	// Team names a bound team for people: "Slack workspace", "Discord server".
	Team string
	// Bind is the operator command that binds a team, up to its flags.
	Bind string
	// Warning and Cross mark failures (Slack renders :warning:, Discord needs the emoji);
	// Working, Done, Stopped and Lock mark a turn's status and approvals.
	Warning, Cross               string
	Working, Done, Stopped, Lock string
	// Escape makes text from an agent show as written (nil: shown as is).
	Escape func(string) string
	// EscapeLabel makes a short agent-supplied label (a tool's name) show as written,
	// markup and all; a reply's markup, by contrast, is meant to render.
	EscapeLabel func(string) string
	// Markup is how the bot's own lines are marked up (markup.go).
	Markup
	// RepliesGo, Starts and Followed are the help's words for how the platform's
	// threads work: where replies go ("here": the mention's own thread on Slack;
	// "there": the thread Discord starts on the message), how a workspace starts, and
	// what `follow all` takes for the agent ("reply", "message").
	RepliesGo, Starts, Followed string
}

func (p Platform) escape(s string) string {
	if p.Escape == nil {
		return s
	}
	return p.Escape(s)
}

func (p Platform) escapeLabel(s string) string {
	if p.EscapeLabel == nil {
		return p.escape(s)
	}
	return p.EscapeLabel(s)
}

// The platforms.
var (
	Slack = Platform{Name: core.PlatformSlack, Team: "Slack workspace", Bind: "wshub admin slack bind --team <team id> --account <account id>",
		Warning: ":warning:", Cross: ":x:", Working: ":hourglass_flowing_sand:", Done: ":white_check_mark:",
		Stopped: ":black_square_for_stop:", Lock: ":lock:", Escape: EscapeMrkdwn,
		Markup:    Markup{Strong: "*", Em: "_", Literal: EscapeMrkdwn},
		RepliesGo: "here", Starts: "in a new thread starts a workspace; files on the message are attached.", Followed: "reply"}
	Discord = Platform{Name: core.PlatformDiscord, Team: "Discord server", Bind: "wshub admin discord bind --guild <guild id> --account <account id>",
		Warning: "⚠️", Cross: "❌", Working: "⏳", Done: "✅", Stopped: "⏹️", Lock: "🔒", EscapeLabel: EscapeDiscordMarkdown,
		Markup:    Markup{Strong: "**", Em: "*", Literal: escapeDiscordLine},
		RepliesGo: "there", Followed: "message",
		Starts: "in a channel starts a workspace in a new thread; files on the message are attached. `/workspace` does the same."}
)

// refusals words core's codes for people in a thread: one table, like api/'s status
// table. Codes not listed get the generic sentence; internals are never shown. {team} is
// the team word, {bind} the bind command (named placeholders rather than Sprintf verbs:
// most sentences use neither, and Sprintf would append "%!(EXTRA …)" to them).
var refusals = map[string]string{
	core.CodeChatNotBound:                  "This {team} isn't connected to a wshub account yet. Ask your hub operator to run `{bind}`.",
	core.CodeEntitlementRequired:           "This team's wshub account doesn't have cloud workspaces enabled. Ask your hub operator to enable them.",
	core.CodeBillingHold:                   "This team's wshub account has a billing hold, so no work can start. Ask your hub operator to clear it.",
	core.CodeBillingPeriodMissing:          "This team's wshub account has no current billing period, so no work can start. Ask your hub operator to renew it.",
	core.CodeCloudProjectRequired:          "There's no ready project to start from. Choose this channel's project with `use <project>` (mention me first), or ask your hub operator to add one.",
	core.CodeProjectNotFound:               "The project chosen for this channel no longer exists. Choose another with `use <project>`.",
	core.CodeProjectNotReady:               "The project chosen for this channel isn't ready yet (it is still being prepared, or failed). Try again shortly, or choose another with `use <project>`.",
	core.CodeChatProjectUnknown:            "I don't know that project. Use its name or id as `wshub admin project list` shows it.",
	core.CodeScheduleNotFound:              "I don't know that schedule here. `schedules` lists this channel's schedules with their ids.",
	core.CodeAgentAndModelRequired:         "No agent and model are chosen for this team yet. Ask your hub operator to bind the team with one, for example `{bind} --agent agent_1 --model <model>` (agent_1 Claude Code, agent_2 Codex, agent_3 Cursor Agent, agent_4 Grok CLI).",
	core.CodeWorkspaceNotAcceptingMessages: "This thread's workspace is archived or has failed, so it takes no more messages. Start a new thread (mention me there) to begin a new workspace.",
	core.CodeWorkspaceNotFound:             "This thread's workspace has been deleted. Start a new thread (mention me there) to begin a new one.",
	core.CodeChatNoWorkspace:               "There's no workspace in this thread yet. Mention me with what to do to start one.",
	core.CodeChatNotAllowed:                "You can't start or talk to workspaces here: this {team} limits them to some roles or channels. Ask your hub operator which.",
	core.CodeChatDirectMessage:             "I only work in a server's channels: mention me in a channel to start a workspace.",
	core.CodeInvalidPrompt:                 "That message is empty or longer than 65,536 characters.",
	core.CodeInvalidMessage:                "That message is empty or longer than 65,536 characters.",
	core.CodeUnsupportedAssetType:          "One of the files is of a type workspaces can't take. Attach text, code, images, PDFs or archives.",
	core.CodeInvalidAssetSize:              "One of the files is empty or larger than 20 MiB.",
	core.CodeInvalidAssetBody:              "One of the files could not be read.",
	core.CodeEncryptionNotConfigured:       "The hub has no content key configured, so it can't store messages. Ask your hub operator to set WSHUB_CONTENT_KEY.",
	core.CodeProviderUnavailable:           "The machine provider for workspaces is unavailable. Try again later.",
}

// GenericRefusal is said for anything else: the details are in the hub's logs.
const GenericRefusal = "Something went wrong on the hub and your request wasn't taken. Try again; if it keeps failing, your hub operator can find the details in the hub's logs."

// Refusal is the sentence for err on platform p.
func (p Platform) Refusal(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		code := core.BaseErrorCode(ce.Code)
		if s, ok := refusals[code]; ok {
			return strings.NewReplacer("{team}", p.Team, "{bind}", p.Bind).Replace(s)
		}
		if code == core.CodeBranchInUse {
			return "That branch is already used by another workspace."
		}
		if code == core.CodePullRequestRefused {
			// The detail is the forge's words, or what the project lacks.
			return "I couldn't open a pull request: " + ce.Detail
		}
		if code == core.CodeQuotaExceeded {
			// The detail names the limit and how to get more, and nothing internal.
			return "That would go over this team's quota, so it wasn't taken: " + ce.Detail
		}
	}
	return GenericRefusal
}

// failures words a failed workspace's statusCode (core.FailureStatus).
var failures = map[core.FailureKind]string{
	core.FailureProvision:   "its machine could not be provisioned",
	core.FailureSetup:       "its checkout could not be set up",
	core.FailureMachineLost: "its machine was lost",
}

// setupDetails words the reason of a failure, when it helps.
var setupDetails = map[core.FailureReason]string{
	core.ReasonBaseRefNotFound: "the base branch or commit does not exist",
	core.ReasonProjectNotReady: "the project is not ready",
	core.ReasonSetupScript:     "the project's setup script failed (its output is on the workspace's page)",
	core.ReasonSetupTimeout:    "the project's setup script ran out of time",
	core.ReasonEnvironmentInvalid: "the project's environment file cannot be used " +
		"(the workspace's status says why)",
}

// FailureNotice tells a thread that its workspace failed, and what to do.
func (p Platform) FailureNotice(workspaceID, code string) string {
	kind, detail := core.ParseFailureStatus(code)
	why, ok := failures[kind]
	if !ok {
		why = "the hub could not keep it running"
	}
	if d, ok := setupDetails[detail]; ok {
		why += ": " + d
	}
	return fmt.Sprintf("%s Workspace `%s` failed (%s), so it takes no more messages. "+
		"Start a new thread (mention me there) to try again.", p.Warning, workspaceID, why)
}

// AgentName is the agent's product name for people.
func AgentName(id string) string { return core.AgentLabel(id) }
