// Command wshub runs the hub and its operator tools:
//
//	wshub serve     the hub: API, chat bots and background work, on WSHUB_ADDR
//	wshub migrate   apply database migrations to DATABASE_URL
//	wshub admin     operator commands, JSON on stdout
//	wshub dev       development: migrate, create a dev account and key once, serve
//	wshub runtime   one remote workspace's turn loop, on its machine
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	goruntime "runtime"
	"runtime/debug"
	"syscall"

	"github.com/wshub/wshub/adapters/agents"
)

const usage = `usage: wshub <command> [arguments]

commands:
  serve     run the hub (API, chat bots, background work) on WSHUB_ADDR
  migrate   apply database migrations to DATABASE_URL
  admin     operator commands (run 'wshub admin' for the list)
  dev       development hub: local setup once, then serve
  runtime   a remote workspace's turn loop, on its machine (WSHUB_RUNTIME_URL, _TOKEN, _DIR)
  approval-mcp  Claude Code's permission prompt tool (MCP on stdio), started by Claude Code
            inside a turn in the approval-required mode; not for people
  install-runtime DIR  copy this binary to DIR/wshub: a Pod's init container, for a runtime
            in a project's own image
  version   the build: module version, commit and Go version

client commands (the REST API from a shell or CI; WSHUB_URL, WSHUB_API_KEY; --help on each):
  ws create|send|get|list|messages|pr, projects, agents, providers,
  webhooks create|list|delete|deliveries|redeliver,
  schedules create|list|get|pause|resume|run|runs|delete
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], processEnviron(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command args name, with what it reads of its process in env.
func run(ctx context.Context, args []string, env environ, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if args[0] == "install-runtime" {
		// A Pod's init container: wshub install-runtime DIR.
		if len(args) != 2 {
			fmt.Fprintln(stderr, "usage: wshub install-runtime DIR")
			return 2
		}
		if err := installRuntime(args[1]); err != nil {
			fmt.Fprintln(stderr, "wshub install-runtime:", err)
			return 1
		}
		return 0
	}
	if u, ok := serverUsage[args[0]]; ok && len(args) > 1 {
		if wantsHelp(args[1:]) {
			fmt.Fprint(stdout, u)
			return 0
		}
		// These take no arguments: one given was meant for something else (a flag of
		// another command, a setting that belongs in the environment), and is not
		// silently dropped.
		fmt.Fprintf(stderr, "wshub %s: unexpected argument %q\n\n%s", args[0], args[1], u)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, env, log)
	case "migrate":
		err = migrate(ctx, env)
	case "admin":
		return admin(ctx, args[1:], env, stdout, stderr)
	case "dev":
		err = dev(ctx, env, log, stdout)
	case "runtime":
		return runtimeCmd(ctx, env, log)
	case "approval-mcp":
		// Started by Claude Code inside a turn's sandbox: its permission prompt tool, on
		// the process's own standard streams, which it closes when done.
		err = agents.ServeApprovalMCP(ctx, env.get(agents.ApprovalSocketEnv), os.Stdin, os.Stdout)
	case "version", "--version":
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "ws", "projects", "agents", "providers", "webhooks", "schedules":
		return runAPI(ctx, args, env, stdout, stderr)
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

// serverUsage is what --help prints for the commands configured by the environment
// alone (the README's settings table lists every variable), which take no arguments.
var serverUsage = map[string]string{
	"serve": `usage: wshub serve

Runs the hub: the REST API on WSHUB_ADDR, the chat bots configured, and the background
work (turns, webhooks, sweeps). Configured by the environment: DATABASE_URL,
WSHUB_CONTENT_KEY, WSHUB_DATA_DIR and the WSHUB_* settings in the README.
`,
	"migrate": `usage: wshub migrate

Applies the database migrations to DATABASE_URL, and exits.
`,
	"dev": `usage: wshub dev

A development hub (what make run starts): migrations, a development account, API key,
content key and sample project made once and kept in .data/dev.json, then serve.
`,
	"runtime": `usage: wshub runtime

One remote workspace's turn loop, run on the workspace's machine by its provider: it
asks the hub for the next message, runs the agent's turn and reports it. Configured
by WSHUB_RUNTIME_URL, the runtime token (WSHUB_RUNTIME_TOKEN_FD or _FILE) and
WSHUB_RUNTIME_DIR; not for people. It exits 4 when it has reached no hub for
WSHUB_RUNTIME_HUB_LOST_AFTER (10m), having stopped its turn.
`,
	"approval-mcp": `usage: wshub approval-mcp

Claude Code's permission prompt tool (MCP on stdio), started by Claude Code inside a
turn in the approval-required mode; not for people.
`,
	"version": `usage: wshub version

The build: module version, commit and Go version.
`,
}

// wantsHelp reports whether args ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || a == "help" {
			return true
		}
	}
	return false
}

// version describes the build from what the Go toolchain recorded in the binary.
// Stamped by the Makefile and the Dockerfile (-ldflags -X), for builds the Go
// toolchain cannot stamp itself: -buildvcs=false, or a Docker build, whose context has
// no .git.
var (
	buildVersion = ""
	buildCommit  = ""
)

func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	v := "wshub " + cmp.Or(buildVersion, bi.Main.Version, "(devel)")
	commit, modified := buildCommit, false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = cmp.Or(commit, s.Value)
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if commit != "" {
		v += " commit " + commit
	} else {
		v += " (commit unknown: build with make build, or -ldflags '-X main.buildCommit=...')"
	}
	if modified {
		v += " (modified)"
	}
	return v + " " + cmp.Or(bi.GoVersion, goruntime.Version())
}
