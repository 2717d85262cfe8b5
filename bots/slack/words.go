package slack

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wshub/wshub/core"
)

// refusals words core's codes for people in a thread: one table, like api/'s status
// table. Codes not listed get the generic sentence; internals are never shown.
var refusals = map[string]string{
	core.CodeChatNotBound:                  "This Slack workspace isn't connected to a wshub account yet. Ask your hub operator to run `wshub admin slack bind --team <team id> --account <account id>`.",
	core.CodeEntitlementRequired:           "This team's wshub account doesn't have cloud workspaces enabled. Ask your hub operator to enable them.",
	core.CodeBillingHold:                   "This team's wshub account has a billing hold, so no work can start. Ask your hub operator to clear it.",
	core.CodeBillingPeriodMissing:          "This team's wshub account has no current billing period, so no work can start. Ask your hub operator to renew it.",
	core.CodeCloudProjectRequired:          "There's no ready project to start from. Choose this channel's project with `use <project>` (mention me first), or ask your hub operator to add one.",
	core.CodeProjectNotFound:               "The project chosen for this channel no longer exists. Choose another with `use <project>`.",
	core.CodeProjectNotReady:               "The project chosen for this channel isn't ready yet (it is still being prepared, or failed). Try again shortly, or choose another with `use <project>`.",
	core.CodeChatProjectUnknown:            "I don't know that project. Use its name or id as `wshub admin project list` shows it.",
	core.CodeAgentAndModelRequired:         "No agent and model are chosen for this team yet. Ask your hub operator to bind the team with one, for example `wshub admin slack bind --team <team id> --account <account id> --agent agent_1 --model <model>` (agent_1 Claude Code, agent_2 Codex, agent_3 Cursor Agent, agent_4 Grok CLI).",
	core.CodeWorkspaceNotAcceptingMessages: "This thread's workspace is archived or has failed, so it takes no more messages. Start a new thread (mention me there) to begin a new workspace.",
	core.CodeWorkspaceNotFound:             "This thread's workspace has been deleted. Start a new thread (mention me there) to begin a new one.",
	core.CodeChatNoWorkspace:               "There's no workspace in this thread yet. Mention me with what to do to start one.",
	core.CodeInvalidPrompt:                 "That message is empty or longer than 65,536 characters.",
	core.CodeInvalidMessage:                "That message is empty or longer than 65,536 characters.",
	core.CodeUnsupportedAssetType:          "One of the files is of a type workspaces can't take. Attach text, code, images, PDFs or archives.",
	core.CodeInvalidAssetSize:              "One of the files is empty or larger than 20 MiB.",
	core.CodeInvalidAssetBody:              "One of the files could not be read.",
	core.CodeEncryptionNotConfigured:       "The hub has no content key configured, so it can't store messages. Ask your hub operator to set WSHUB_CONTENT_KEY.",
	core.CodeProviderUnavailable:           "The machine provider for workspaces is unavailable. Try again later.",
}

const genericRefusal = "Something went wrong on the hub and your request wasn't taken. Try again; if it keeps failing, your hub operator can find the details in the hub's logs."

// refusal is the sentence for err.
func refusal(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		code, _, _ := strings.Cut(ce.Code, ":")
		if s, ok := refusals[code]; ok {
			return s
		}
		if code == core.CodeBranchInUse {
			return "That branch is already used by another workspace."
		}
	}
	return genericRefusal
}

// failures words a failed workspace's statusCode (its part before ":").
var failures = map[string]string{
	"provision_failed": "its machine could not be provisioned",
	"setup_failed":     "its checkout could not be set up",
	"machine_lost":     "its machine was lost",
}

// setupDetails words the part after ":" of a setup failure, when it helps.
var setupDetails = map[string]string{
	"base_ref_not_found": "the base branch or commit does not exist",
	"project_not_ready":  "the project is not ready",
}

// failureNotice tells a thread that its workspace failed, and what to do.
func failureNotice(workspaceID, code string) string {
	kind, detail, _ := strings.Cut(code, ":")
	why, ok := failures[kind]
	if !ok {
		why = "the hub could not keep it running"
	}
	if d, ok := setupDetails[detail]; ok {
		why += ": " + d
	}
	return fmt.Sprintf(":warning: Workspace `%s` failed (%s), so it takes no more messages. "+
		"Start a new thread (mention me there) to try again.", workspaceID, why)
}

// agentName is the agent's product name for people.
func agentName(id string) string {
	names := map[string]string{"agent_1": "Claude Code", "agent_2": "Codex", "agent_3": "Cursor Agent", "agent_4": "Grok CLI"}
	if n, ok := names[id]; ok {
		return n + " (" + id + ")"
	}
	return id
}
