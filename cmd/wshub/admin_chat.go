package main

// wshub admin slack bind and discord bind: a chat team bound to an account.

import (
	"context"
	"flag"

	"github.com/wshub/wshub/core"
)

func slackBind(fs *flag.FlagSet) adminRun {
	b := bindFlags(fs, core.PlatformSlack, "team", "Slack team (workspace) id, T...")
	return func(ctx context.Context, h adminHub) (any, error) {
		return bind(ctx, h.svc, b())
	}
}

func discordBind(fs *flag.FlagSet) adminRun {
	b := bindFlags(fs, core.PlatformDiscord, "guild", "Discord server (guild) id")
	roles := fs.String("roles", "", "comma-separated role ids: only members holding one may start or talk")
	channels := fs.String("channels", "", "comma-separated channel ids: only there and in their threads")
	return func(ctx context.Context, h adminHub) (any, error) {
		binding := b()
		binding.Roles, binding.Channels = splitIDs(*roles), splitIDs(*channels)
		return bind(ctx, h.svc, binding)
	}
}

// bindFlags declares the flags every chat binding takes (the team under the platform's
// own name) and returns the binding they give once parsed.
func bindFlags(fs *flag.FlagSet, platform, teamFlag, teamUsage string) func() *core.ChatBinding {
	team := fs.String(teamFlag, "", teamUsage)
	id := fs.String("account", "", "account id the "+teamFlag+" acts for")
	project := fs.String("project", "", "default project for workspaces started from "+platform)
	agent := fs.String("agent", "", "default agent (agent_1..agent_4), with --model")
	model := fs.String("model", "", "default model, with --agent")
	mode := fs.String("runtime-mode", "", "runtimeMode of the workspaces started from "+platform+" (approval-required: the agent asks the thread)")
	provider := fs.String("provider", "", "provider of the workspaces started from "+platform+" (default: the account's, else the hub's)")
	return func() *core.ChatBinding {
		return &core.ChatBinding{Platform: platform, TeamID: *team, AccountID: *id, ProjectID: *project, Agent: *agent, Model: *model,
			RuntimeMode: *mode, ProviderID: *provider}
	}
}

// bind stores a chat binding and echoes it; a Slack team shows as "team", a Discord
// guild as "guild", with the roles and channels it is limited to.
func bind(ctx context.Context, svc *core.Service, b *core.ChatBinding) (any, error) {
	if err := svc.Admin.BindChat(ctx, b); err != nil {
		return nil, err
	}
	if b.Platform == core.PlatformDiscord {
		return discordBound{AccountID: b.AccountID, Agent: b.Agent, Channels: b.Channels, Guild: b.TeamID, Model: b.Model,
			Platform: b.Platform, ProjectID: b.ProjectID, ProviderID: b.ProviderID, Roles: b.Roles, RuntimeMode: b.RuntimeMode}, nil
	}
	return slackBound{AccountID: b.AccountID, Agent: b.Agent, Model: b.Model, Platform: b.Platform, ProjectID: b.ProjectID,
		ProviderID: b.ProviderID, RuntimeMode: b.RuntimeMode, Team: b.TeamID}, nil
}

// slackBound is a Slack team's binding as slack bind prints it.
type slackBound struct {
	AccountID   string `json:"accountId"`
	Agent       string `json:"agent"`
	Model       string `json:"model"`
	Platform    string `json:"platform"`
	ProjectID   string `json:"projectId"`
	ProviderID  string `json:"providerId"`
	RuntimeMode string `json:"runtimeMode"`
	Team        string `json:"team"`
}

// discordBound is a Discord server's binding as discord bind prints it: the guild,
// and the roles and channels it is limited to (empty: none).
type discordBound struct {
	AccountID   string   `json:"accountId"`
	Agent       string   `json:"agent"`
	Channels    []string `json:"channels"`
	Guild       string   `json:"guild"`
	Model       string   `json:"model"`
	Platform    string   `json:"platform"`
	ProjectID   string   `json:"projectId"`
	ProviderID  string   `json:"providerId"`
	Roles       []string `json:"roles"`
	RuntimeMode string   `json:"runtimeMode"`
}
