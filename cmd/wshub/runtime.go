package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strings"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/wsruntime"
)

// runtimeCmd runs `wshub runtime`: one workspace's turn loop on its machine. Its
// environment is the runtime's (WSHUB_RUNTIME_URL, WSHUB_RUNTIME_TOKEN,
// WSHUB_RUNTIME_DIR) and the agents' (WSHUB_AGENT_<N>_COMMAND, WSHUB_AGENT_ENV,
// WSHUB_SANDBOX, WSHUB_SANDBOX_READONLY, WSHUB_CLAUDE_BASE_URL, WSHUB_CODEX_BASE_URL,
// WSHUB_CLAUDE_PATH, WSHUB_CODEX_PATH); never the hub's database or keys.
// A runtime the hub stopped exits ExitStopped, so a supervisor knows not to restart it.
func runtimeCmd(ctx context.Context, log *slog.Logger) int {
	cfg := wsruntime.Config{
		HubURL: os.Getenv("WSHUB_RUNTIME_URL"), Token: os.Getenv("WSHUB_RUNTIME_TOKEN"), Dir: os.Getenv("WSHUB_RUNTIME_DIR"),
		Log: log,
		Agents: agents.Options{
			Commands: agents.CommandsFromEnv(os.Environ()), Self: self(),
			LookPath:      agents.ProgramLookPath(os.Getenv("WSHUB_CLAUDE_PATH"), os.Getenv("WSHUB_CODEX_PATH"), exec.LookPath),
			ClaudeBaseURL: os.Getenv("WSHUB_CLAUDE_BASE_URL"), CodexBaseURL: os.Getenv("WSHUB_CODEX_BASE_URL"),
			AgentEnv: splitList(os.Getenv("WSHUB_AGENT_ENV"), ","),
			Sandbox:  agents.SandboxConfig{Mode: os.Getenv("WSHUB_SANDBOX"), ReadOnly: splitList(os.Getenv("WSHUB_SANDBOX_READONLY"), ":")},
		},
	}
	// The token is the runtime's only credential: it is taken out of the environment
	// so that nothing the runtime starts inherits it (agents get an allow-list anyway).
	_ = os.Unsetenv("WSHUB_RUNTIME_TOKEN")
	rt, err := wsruntime.New(ctx, cfg)
	if err != nil {
		log.Error("runtime", "err", err)
		return 1
	}
	err = rt.Run(ctx)
	switch {
	case errors.Is(err, wsruntime.ErrStopped):
		return wsruntime.ExitStopped
	case err != nil && ctx.Err() == nil:
		log.Error("runtime", "err", err)
		return 1
	}
	return 0
}

func splitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// self is this executable, "" when it cannot be found.
func self() string {
	p, _ := os.Executable()
	return p
}
