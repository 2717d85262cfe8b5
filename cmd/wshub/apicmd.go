package main

// The client commands: the REST API from a shell or a CI job, through the client
// package, reading WSHUB_URL and WSHUB_API_KEY.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wshub/wshub/client"
)

// Exit codes of the client commands (README, "CI"): --wait reports how the turn ended.
const (
	exitCompleted   = 0
	exitFailed      = 1 // the hub could not be reached, or something else went wrong
	exitTurnError   = 2
	exitInterrupted = 3
	exitRefused     = 4 // the API answered with an error; its code is on stderr
	exitTimeout     = 5
	// exitPushRefused: the turn completed, but the project's repository refused the
	// push, so its commits are on the hub's copy of the branch only.
	exitPushRefused = 6
	// exitPullPending (7, apicmd_pr.go): a pull request asked for, not open yet.
	exitUsage = 64
)

// apiCommand is one client command.
type apiCommand struct {
	usage, example string
	run            func(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int
}

var apiCommands = map[string]apiCommand{
	"ws create": {"wshub ws create [--prompt TEXT|-] [--project ID] [--provider ID] [--agent A] [--model M] [--runtime-mode MODE] [--branch B] [--base-ref REF] [--file F ...] [--wait] [--timeout D] [--json]",
		`wshub ws create --prompt "Fix the flaky test" --agent agent_1 --model sonnet --branch ci/fix --wait --timeout 30m`, wsCreate},
	"ws send": {"wshub ws send ID TEXT|- [--file F ...] [--wait] [--timeout D] [--json]",
		`git diff | wshub ws send ws_123 - --wait`, wsSend},
	"ws get":      {"wshub ws get ID [--json]", "wshub ws get ws_123", wsGet},
	"ws list":     {"wshub ws list [--json]", "wshub ws list", wsList},
	"ws pr":       {"wshub ws pr ID|--branch B [--json]", `url=$(wshub ws pr --branch "ci/$CI_COMMIT_SHORT_SHA")`, wsPR},
	"ws messages": {"wshub ws messages ID [--after N] [--follow] [--json]", "wshub ws messages ws_123 --follow", wsMessages},
	"projects":    {"wshub projects [--json]", "wshub projects", listProjects},
	"agents":      {"wshub agents [--json]", "wshub agents", listAgents},
	"providers":   {"wshub providers [--json]", "wshub providers", listProviders},
	"webhooks create": {"wshub webhooks create --url URL [--description TEXT] [--json]",
		"wshub webhooks create --url https://ci.example.com/wshub --description CI", webhooksCreate},
	"webhooks list":   {"wshub webhooks list [--json]", "wshub webhooks list", webhooksList},
	"webhooks delete": {"wshub webhooks delete ID", "wshub webhooks delete wh_123", webhooksDelete},
	"webhooks deliveries": {"wshub webhooks deliveries ID [--before CURSOR] [--limit N] [--json]",
		"wshub webhooks deliveries wh_123 --limit 10", webhooksDeliveries},
	"webhooks redeliver": {"wshub webhooks redeliver ID DELIVERY_ID [--json]", "wshub webhooks redeliver wh_123 dlv_456", webhooksRedeliver},
}

// apiEnv is what a command works with.
type apiEnv struct {
	c              *client.Client
	stdin          io.Reader // where "-" reads a prompt from
	stdout, stderr io.Writer
	json           bool
}

// runAPI runs a client command; args start after "wshub".
func runAPI(ctx context.Context, args []string, env environ, stdout, stderr io.Writer) int {
	name, rest := args[0], args[1:]
	if _, ok := apiCommands[name]; !ok && len(args) >= 2 {
		name, rest = args[0]+" "+args[1], args[2:]
	}
	cmd, ok := apiCommands[name]
	if !ok {
		// A group alone, or with --help ("wshub ws --help"): its commands.
		if group := groupUsage(args[0]); group != "" && (len(args) == 1 || wantsHelp(args[1:2])) {
			if len(args) == 1 {
				fmt.Fprint(stderr, group)
				return exitUsage
			}
			fmt.Fprint(stdout, group)
			return 0
		}
		fmt.Fprintf(stderr, "wshub: unknown command %q\n\n%s", strings.Join(args, " "), apiUsage())
		return exitUsage
	}
	fs := flag.NewFlagSet("wshub "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\nexample:\n  %s\n\nflags:\n", cmd.usage, cmd.example)
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nWSHUB_URL is the hub's address, WSHUB_API_KEY an API key (svc_...).\n")
	}
	e := &apiEnv{stdin: env.input(), stdout: stdout, stderr: stderr}
	fs.BoolVar(&e.json, "json", false, "print the API's JSON instead of a table")
	for _, a := range rest {
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(stdout)
			fs.Usage = func() {
				fmt.Fprintf(stdout, "usage: %s\n\nexample:\n  %s\n\nWSHUB_URL is the hub's address, WSHUB_API_KEY an API key (svc_...).\n", cmd.usage, cmd.example)
			}
			fs.Usage()
			return 0
		}
	}
	url, key := env.get("WSHUB_URL"), env.get("WSHUB_API_KEY")
	if url == "" {
		if d, path, ok := localDevHub(env); ok {
			url = d.URL
			if key == "" {
				key = d.Key
			}
			fmt.Fprintf(stderr, "wshub: WSHUB_URL is not set: using the development hub of %s (%s)\n", path, url)
		}
	}
	c, err := client.New(url, key)
	if err != nil {
		fmt.Fprintf(stderr, "wshub %s: set WSHUB_URL and WSHUB_API_KEY (%v)\n", name, err)
		return exitUsage
	}
	e.c = c
	return cmd.run(ctx, e, fs, rest)
}

// localDevHub is the development hub `make run` keeps in dev.json ($WSHUB_DATA_DIR, else
// .data under the working directory, the clone make run ran in), when it recorded its
// address: the client commands find it there when WSHUB_URL is not set.
func localDevHub(env environ) (devState, string, bool) {
	dir := env.get("WSHUB_DATA_DIR")
	if dir == "" {
		dir = ".data"
	}
	path := filepath.Join(dir, "dev.json")
	var st devState
	b, err := os.ReadFile(env.path(path))
	if err != nil || json.Unmarshal(b, &st) != nil || st.URL == "" {
		return devState{}, "", false
	}
	return st, path, true
}

// apiCommandOrder is the order the usage lists the client commands in.
var apiCommandOrder = []string{"ws create", "ws send", "ws get", "ws list", "ws messages", "ws pr", "projects", "agents", "providers",
	"webhooks create", "webhooks list", "webhooks delete", "webhooks deliveries", "webhooks redeliver"}

func apiUsage() string {
	var b strings.Builder
	b.WriteString("client commands (WSHUB_URL, WSHUB_API_KEY):\n")
	for _, n := range apiCommandOrder {
		fmt.Fprintf(&b, "  %s\n", apiCommands[n].usage)
	}
	return b.String()
}

// groupUsage lists the commands of a group ("ws", "webhooks"); "" for a name that is
// not one.
func groupUsage(group string) string {
	var b strings.Builder
	for _, n := range apiCommandOrder {
		if strings.HasPrefix(n, group+" ") {
			fmt.Fprintf(&b, "  %s\n", apiCommands[n].usage)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("usage: wshub %s <command>; --help on each for its flags and an example\n\n%s\nWSHUB_URL is the hub's address, WSHUB_API_KEY an API key (svc_...).\n", group, b.String())
}

// parseArgs parses flags that may come before or after the positional arguments.
// positionals parses flags given before, between or after the arguments, and returns
// the arguments.
func positionals(fs *flag.FlagSet, args []string) ([]string, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func parseArgs(fs *flag.FlagSet, args []string, positional int) ([]string, bool) {
	pos, ok := positionals(fs, args)
	if !ok {
		return nil, false
	}
	if len(pos) != positional {
		fmt.Fprintf(fs.Output(), "expected %d argument(s), got %d\n", positional, len(pos))
		fs.Usage()
		return nil, false
	}
	return pos, true
}

// fail reports err: an API refusal (exit 4, its code on stderr) or anything else.
func (e *apiEnv) fail(err error) int {
	var ae *client.Error
	switch {
	case errors.As(err, &ae):
		fmt.Fprintf(e.stderr, "%s\n", ae.Code)
		if ae.Detail != "" {
			fmt.Fprintf(e.stderr, "%s\n", ae.Detail)
		}
		return exitRefused
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintln(e.stderr, "timed out")
		return exitTimeout
	}
	fmt.Fprintln(e.stderr, err)
	return exitFailed
}

func (e *apiEnv) printJSON(v any) {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (e *apiEnv) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

// files collects repeated --file flags.
type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// readText is the argument, or standard input for "-".
func (e *apiEnv) readText(s string) (string, error) {
	if s != "-" {
		return s, nil
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
	return strings.TrimRight(string(b), "\n"), err
}

// upload sends each file and returns the asset ids.
func (e *apiEnv) upload(ctx context.Context, workspaceID string, paths []string) ([]string, error) {
	var ids []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		ctype := mime.TypeByExtension(filepath.Ext(p))
		if ctype == "" || strings.HasPrefix(ctype, "text/plain") {
			ctype = "text/plain"
		}
		if strings.HasSuffix(p, ".md") {
			ctype = "text/markdown"
		}
		a, err := e.c.UploadAttachment(ctx, workspaceID, client.Upload{Name: filepath.Base(p), ContentType: ctype, Data: data})
		if err != nil {
			return nil, err
		}
		ids = append(ids, a.AssetID)
	}
	return ids, nil
}

// wait waits for the message's turn, printing progress to stderr when stdout is a
// terminal, then the reply on stdout; the exit code says how the turn ended.
func (e *apiEnv) wait(ctx context.Context, workspaceID, messageID string, timeout time.Duration) int {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	stop := e.progress(ctx, workspaceID)
	r, err := e.c.WaitForReply(ctx, workspaceID, messageID)
	stop()
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(r)
	} else if r.Assistant != nil {
		fmt.Fprintln(e.stdout, r.Assistant.Text)
	}
	switch r.Outcome() {
	case "completed":
		return e.pushResult(ctx, workspaceID, r.Assistant.TurnID)
	case "interrupted":
		fmt.Fprintln(e.stderr, "the turn was interrupted (stopped, its workspace paused, archived or deleted, the hub shut down, or past its time limit)")
		return exitInterrupted
	}
	if r.Failure != nil {
		fmt.Fprintf(e.stderr, "%s: %s\n", r.Failure.Code, r.Failure.Message)
	} else if r.Assistant == nil {
		fmt.Fprintf(e.stderr, "the message was %s without a turn\n", r.Message.Status)
	}
	return exitTurnError
}

// pushResult tells a completed turn whose push the project's repository refused
// (exit 6, and why on stderr) from one whose work left the machine, or that had
// nothing to push (0). The workspace says how its last push went: when a later turn
// has already ended, this turn's push is no longer known, and the turn counts as
// completed.
func (e *apiEnv) pushResult(ctx context.Context, workspaceID, turnID string) int {
	ws, err := e.c.GetWorkspace(ctx, workspaceID)
	if err != nil {
		return e.fail(err)
	}
	if ws.LastTurn == nil || ws.LastTurn.TurnID != turnID || ws.Pushed == nil {
		return exitCompleted
	}
	if !*ws.Pushed {
		fmt.Fprintf(e.stderr, "completed, but the repository refused the push: the commits are on the hub's copy of %s only (the reply says why)\n", ws.Branch)
		return exitPushRefused
	}
	if !e.json && isTerminal(e.stdout) {
		fmt.Fprintf(e.stderr, "pushed %s to %s\n", shortSHA(ws.HeadCommit), ws.Branch)
	}
	return exitCompleted
}

func shortSHA(sha string) string { return sha[:min(len(sha), 12)] }

// progress shows the workspace's state, startup phase, agent status and the time
// waited, on one line of stderr refreshed every second, when stdout is a terminal.
func (e *apiEnv) progress(ctx context.Context, workspaceID string) (stop func()) {
	if !isTerminal(e.stdout) {
		return func() {}
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if ws, err := e.c.GetWorkspace(ctx, workspaceID); err == nil {
				fmt.Fprintf(e.stderr, "\r\033[K%s  %s  agent %s  %s", ws.State, ws.StartupPhase, ws.AgentStatus,
					time.Since(start).Round(time.Second))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		fmt.Fprint(e.stderr, "\r\033[K")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
