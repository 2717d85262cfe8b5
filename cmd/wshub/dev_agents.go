package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// demoAgentEnv names the demo agent's script for `wshub dev` (make run sets it to the
// clone's examples/demo-agent.sh); unset, examples/demo-agent.sh under the working
// directory is used when it is there.
const demoAgentEnv = "WSHUB_DEMO_AGENT"

// realAgent is a coding-agent CLI the development hub runs when its key is in the
// environment and its program is installed.
type realAgent struct {
	id, name, keyVar string
}

// path is the configuration's path of the agent's CLI.
func (a realAgent) path(cfg *hub.Config) *string {
	if a.id == "agent_2" {
		return &cfg.CodexPath
	}
	return &cfg.ClaudePath
}

var realAgents = []realAgent{
	{"agent_1", core.AgentProduct("agent_1"), "ANTHROPIC_API_KEY"},
	{"agent_2", core.AgentProduct("agent_2"), "OPENAI_API_KEY"},
}

// devAgents binds the development hub's agents, so that a first `make run` has one
// whose turns complete: each real CLI that is installed and has its key in the
// environment (the key passed on to its turns), an agent bound by
// WSHUB_AGENT_<N>_COMMAND as it is, and otherwise the demo agent as agent_1. It
// returns the banner's lines about them.
func devAgents(cfg *hub.Config, env environ) []string {
	if cfg.AgentCommands == nil {
		cfg.AgentCommands = map[string]string{}
	}
	look := agents.ProgramLookPath(cfg.ClaudePath, cfg.CodexPath, nil)
	var lines []string
	for _, a := range realAgents {
		if cmd := cfg.AgentCommands[a.id]; cmd != "" {
			lines = append(lines, fmt.Sprintf("%s  the command %s (WSHUB_AGENT_%s_COMMAND)", a.id, cmd, strings.TrimPrefix(a.id, "agent_")))
			continue
		}
		path, err := look(agents.Programs[a.id])
		if err != nil || env.get(a.keyVar) == "" {
			// Not run: the path make run found is not the hub's to check.
			*a.path(cfg) = ""
			continue
		}
		if !slices.Contains(cfg.AgentEnv, a.keyVar) {
			cfg.AgentEnv = append(cfg.AgentEnv, a.keyVar)
		}
		// The sandbox shows the CLI's install (scripts/agents.sh's cache keeps each
		// package with its node_modules) read-only.
		dir := filepath.Dir(path)
		if i := strings.Index(path, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
			dir = path[:i]
		}
		if !slices.Contains(cfg.SandboxReadOnly, dir) {
			cfg.SandboxReadOnly = append(cfg.SandboxReadOnly, dir)
		}
		lines = append(lines, fmt.Sprintf("%s  %s (%s), with %s", a.id, a.name, path, a.keyVar))
	}
	if len(lines) > 0 {
		return lines
	}
	demo := env.get(demoAgentEnv)
	if demo == "" {
		if abs, err := filepath.Abs(env.path(filepath.Join("examples", "demo-agent.sh"))); err == nil {
			if _, err := os.Stat(abs); err == nil {
				demo = abs
			}
		}
	}
	if demo == "" {
		return []string{"no agent: none of ANTHROPIC_API_KEY and OPENAI_API_KEY is set, and the demo agent",
			"(examples/demo-agent.sh) was not found; turns will end agent_not_installed"}
	}
	cfg.AgentCommands["agent_1"] = demo
	return []string{
		"agent_1  the demo agent (" + demo + "): \"Add a CONTRIBUTING.md\" makes that file,",
		"         anything else is noted in NOTES.md; each turn is committed on the workspace's branch.",
		"         For Claude Code instead: ANTHROPIC_API_KEY=sk-ant-... make run (Codex: OPENAI_API_KEY)",
	}
}
