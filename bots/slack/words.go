package slack

import "github.com/wshub/wshub/bots/chat"

// The words are shared with the other chat front-ends (bots/chat); these name them
// for Slack.

func refusal(err error) string { return chat.Slack.Refusal(err) }

func failureNotice(workspaceID, code string) string {
	return chat.Slack.FailureNotice(workspaceID, code)
}

func agentName(id string) string { return chat.AgentName(id) }

const genericRefusal = chat.GenericRefusal
