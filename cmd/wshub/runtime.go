package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/wsruntime"
)

// runtimeCmd runs `wshub runtime`: one workspace's turn loop on its machine. Its
// environment is the runtime's (WSHUB_RUNTIME_URL, WSHUB_RUNTIME_TOKEN_FD or _FILE,
// WSHUB_RUNTIME_DIR, WSHUB_RUNTIME_HUB_LOST_AFTER) and the agents'
// (WSHUB_AGENT_<N>_COMMAND, WSHUB_AGENT_ENV, WSHUB_SANDBOX, WSHUB_SANDBOX_READONLY,
// WSHUB_AGENT_EGRESS_ALLOW, WSHUB_CLAUDE_BASE_URL, WSHUB_CODEX_BASE_URL,
// WSHUB_CLAUDE_PATH, WSHUB_CODEX_PATH, WSHUB_AGENT_LIMITS, WSHUB_AGENT_PIDS_MAX); never
// the hub's database or keys. Each turn's size comes from the hub, with the
// instructions.
// A runtime the hub stopped exits ExitStopped, so a supervisor knows not to restart it;
// one that reached no hub for WSHUB_RUNTIME_HUB_LOST_AFTER exits ExitHubLost.
func runtimeCmd(ctx context.Context, env environ, log *slog.Logger) int {
	token, err := runtimeToken(env)
	if err != nil {
		log.Error("runtime", "err", err)
		return 1
	}
	lostAfter, err := hubLostAfter(env.get(wsruntime.HubLostAfterVar))
	if err != nil {
		log.Error("runtime", "err", err)
		return 1
	}
	author, err := gitrepo.ParseAuthor(env.get("WSHUB_COMMIT_AUTHOR"))
	if err != nil {
		log.Error("runtime: WSHUB_COMMIT_AUTHOR", "err", err)
		return 1
	}
	// -1 keeps no network namespace between turns, which envBytes would read as 0.
	keptNetworks, _ := strconv.Atoi(env.get("WSHUB_SANDBOX_KEPT_NETWORKS"))
	cfg := wsruntime.Config{
		Author: author,
		HubURL: env.get("WSHUB_RUNTIME_URL"), Token: token, Dir: env.get("WSHUB_RUNTIME_DIR"),
		DiskBytes:    envBytes(env, "WSHUB_WORKSPACE_DISK_BYTES"),
		HubLostAfter: lostAfter,
		Log:          log,
		Agents: agents.Options{
			Commands: agents.CommandsFromEnv(env.list()), Self: self(),
			LookPath:      agents.ProgramLookPath(env.get("WSHUB_CLAUDE_PATH"), env.get("WSHUB_CODEX_PATH"), exec.LookPath),
			ClaudeBaseURL: env.get("WSHUB_CLAUDE_BASE_URL"), CodexBaseURL: env.get("WSHUB_CODEX_BASE_URL"),
			AgentEnv: splitList(env.get("WSHUB_AGENT_ENV"), ","), LookupEnv: env.lookup,
			Sandbox: sandbox.Config{Mode: env.get("WSHUB_SANDBOX"), ReadOnly: splitList(env.get("WSHUB_SANDBOX_READONLY"), ":"),
				EgressAllow: splitList(env.get("WSHUB_AGENT_EGRESS_ALLOW"), ","),
				TmpBytes:    envBytes(env, "WSHUB_SANDBOX_TMP_BYTES"), ShmBytes: envBytes(env, "WSHUB_SANDBOX_SHM_BYTES"),
				KeptNetworks: keptNetworks, KeptNetworkBytes: envBytes(env, "WSHUB_SANDBOX_KEPT_NETWORK_BYTES")},
			Limits: sandbox.LimitsConfig{Mode: env.get("WSHUB_AGENT_LIMITS"), PidsMax: envBytes(env, "WSHUB_AGENT_PIDS_MAX"),
				Optional: env.get("WSHUB_AGENT_LIMITS_OPTIONAL") == "1"},
		},
	}
	rt, err := wsruntime.New(ctx, cfg)
	if err != nil {
		log.Error("runtime", "err", err)
		return 1
	}
	err = rt.Run(ctx)
	switch {
	case errors.Is(err, wsruntime.ErrStopped):
		return wsruntime.ExitStopped
	case errors.Is(err, wsruntime.ErrHubLost):
		return wsruntime.ExitHubLost // Run has logged why
	case err != nil && ctx.Err() == nil:
		log.Error("runtime", "err", err)
		return 1
	}
	return 0
}

// hubLostAfter reads WSHUB_RUNTIME_HUB_LOST_AFTER: a Go duration above 0, the default
// when unset. A value that is not one stops the runtime at its start, where the
// mistake shows, rather than leaving it with a limit nobody meant.
func hubLostAfter(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return wsruntime.DefaultHubLostAfter, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a duration such as 10m or 90s: %w", wsruntime.HubLostAfterVar, v, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s=%q must be more than 0", wsruntime.HubLostAfterVar, v)
	}
	return d, nil
}

// maxTokenBytes bounds what is read as the runtime's token.
const maxTokenBytes = 512

// runtimeToken reads the runtime's only credential where the machine put it, so that
// no process the runtime starts can read it: a descriptor (WSHUB_RUNTIME_TOKEN_FD, the
// process provider's pipe), read once and closed; a file (WSHUB_RUNTIME_TOKEN_FILE, a
// Kubernetes Secret volume), removed after reading when it can be; or, for a
// supervisor that can do neither, WSHUB_RUNTIME_TOKEN, taken out of the environment
// (which /proc/<pid>/environ still shows to the runtime's user: a descriptor or a
// file is better).
func runtimeToken(env environ) (string, error) {
	read := func(f *os.File) (string, error) {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
		if err == nil && len(b) > maxTokenBytes {
			err = errors.New("the runtime token is too long")
		}
		return strings.TrimSpace(string(b)), err
	}
	if fd := env.take("WSHUB_RUNTIME_TOKEN_FD"); fd != "" {
		n, err := strconv.Atoi(fd)
		if err != nil || n < 3 {
			return "", fmt.Errorf("WSHUB_RUNTIME_TOKEN_FD=%q is not a descriptor number of 3 or more", fd)
		}
		return read(os.NewFile(uintptr(n), "runtime-token"))
	}
	if path := env.get("WSHUB_RUNTIME_TOKEN_FILE"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("WSHUB_RUNTIME_TOKEN_FILE: %w", err)
		}
		_ = os.Remove(path) // a read-only Secret volume keeps it; the sandbox does not show it
		return read(f)
	}
	return env.take("WSHUB_RUNTIME_TOKEN"), nil
}

// envBytes is a byte count from the environment (0 when unset or not a number: the
// default).
func envBytes(env environ, name string) int64 {
	n, _ := strconv.ParseInt(env.get(name), 10, 64)
	return max(n, 0)
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
