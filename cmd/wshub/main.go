// Command wshub runs the hub and its operator tools:
//
//	wshub serve     API (and later bots and jobs) on WSHUB_ADDR
//	wshub migrate   apply database migrations to DATABASE_URL
//	wshub admin     operator commands, JSON on stdout
//	wshub dev       development: migrate, create a dev account and key once, serve
//	wshub runtime   one remote workspace's turn loop, on its machine
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/wshub/wshub/adapters/agents"
)

const usage = `usage: wshub <command> [arguments]

commands:
  serve     run the hub (API, health) on WSHUB_ADDR
  migrate   apply database migrations to DATABASE_URL
  admin     operator commands (run 'wshub admin' for the list)
  dev       development hub: local setup once, then serve
  runtime   a remote workspace's turn loop, on its machine (WSHUB_RUNTIME_URL, _TOKEN, _DIR)
  approval-mcp  Claude Code's permission prompt tool (MCP on stdio), started by Claude Code
            inside a turn in the approval-required mode; not for people
  version   the build: module version, commit and Go version

client commands (the REST API from a shell or CI; WSHUB_URL, WSHUB_API_KEY; --help on each):
  ws create|send|get|list|messages, projects, agents, providers, webhooks create|list|delete
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, log)
	case "migrate":
		err = migrate(ctx)
	case "admin":
		return admin(ctx, args[1:], stdout, stderr)
	case "dev":
		err = dev(ctx, log, stdout)
	case "runtime":
		return runtimeCmd(ctx, log)
	case "approval-mcp":
		// Started by Claude Code inside a turn's sandbox: its permission prompt tool.
		err = agents.ServeApprovalMCP(ctx, os.Getenv(agents.ApprovalSocketEnv), os.Stdin, os.Stdout)
	case "version", "--version":
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "ws", "projects", "agents", "providers", "webhooks":
		return runAPI(ctx, args, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "wshub: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "wshub %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// version describes the build from what the Go toolchain recorded in the binary.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "wshub (unknown build)"
	}
	v := "wshub " + bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " commit " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v + " " + bi.GoVersion
}
