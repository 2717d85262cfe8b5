package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/wshub/wshub/client"
)

func wsCreate(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	var req client.CreateWorkspaceRequest
	prompt := fs.String("prompt", "", "the first message (- reads standard input)")
	fs.StringVar(&req.ProjectID, "project", "", "project id (default: the account's only ready project)")
	fs.StringVar(&req.ProviderID, "provider", "", "machine provider id")
	fs.StringVar(&req.Agent, "agent", "", "agent_1 (Claude Code), agent_2 (Codex), agent_3 (Cursor Agent), agent_4 (Grok CLI)")
	fs.StringVar(&req.Model, "model", "", "model id")
	fs.StringVar(&req.RuntimeMode, "runtime-mode", "", "auto, approval-required, auto-accept-edits, auto-accept-edits-and-bash or full-access")
	fs.StringVar(&req.Branch, "branch", "", "branch to create (default: a generated name)")
	fs.StringVar(&req.BaseRef, "base-ref", "", "branch, tag or commit to start from")
	var attach files
	fs.Var(&attach, "file", "a file to attach to the prompt (repeatable)")
	wait := fs.Bool("wait", false, "wait for the first turn and print the reply")
	timeout := fs.Duration("timeout", 0, "with --wait: give up after this long (exit 5)")
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	text, err := e.readText(*prompt)
	if err != nil {
		return e.fail(err)
	}
	if len(attach) > 0 && text == "" {
		fmt.Fprintln(e.stderr, "--file needs --prompt: files are attached to the first message")
		return exitUsage
	}
	if *wait && text == "" {
		fmt.Fprintln(e.stderr, "--wait needs --prompt: there is no turn to wait for")
		return exitUsage
	}
	// With files, api.md's order: create idle, upload, then send the prompt with them.
	if len(attach) == 0 {
		req.Prompt = text
	}
	ws, err := e.c.CreateWorkspace(ctx, req)
	if err != nil {
		return e.fail(err)
	}
	messageID := ""
	if len(attach) > 0 {
		ids, err := e.upload(ctx, ws.WorkspaceID, attach)
		if err != nil {
			return e.fail(err)
		}
		receipt, err := e.c.SendMessage(ctx, ws.WorkspaceID, client.SendMessageRequest{Text: text, Attachments: ids})
		if err != nil {
			return e.fail(err)
		}
		messageID = receipt.MessageID
	} else if text != "" && *wait {
		page, err := e.c.ListMessages(ctx, ws.WorkspaceID, 0, 1)
		if err != nil || len(page.Messages) == 0 {
			return e.fail(fmt.Errorf("the first message is not in the conversation: %w", err))
		}
		messageID = page.Messages[0].MessageID
	}
	if !*wait {
		e.showWorkspaces([]client.Workspace{*ws})
		return 0
	}
	if !e.json {
		fmt.Fprintf(e.stderr, "workspace %s on branch %s\n", ws.WorkspaceID, ws.Branch)
	}
	return e.wait(ctx, ws.WorkspaceID, messageID, *timeout)
}

func wsSend(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	var attach files
	fs.Var(&attach, "file", "a file to attach (repeatable)")
	wait := fs.Bool("wait", false, "wait for the turn and print the reply")
	timeout := fs.Duration("timeout", 0, "with --wait: give up after this long (exit 5)")
	pos, ok := parseArgs(fs, args, 2)
	if !ok {
		return exitUsage
	}
	text, err := e.readText(pos[1])
	if err != nil {
		return e.fail(err)
	}
	ids, err := e.upload(ctx, pos[0], attach)
	if err != nil {
		return e.fail(err)
	}
	receipt, err := e.c.SendMessage(ctx, pos[0], client.SendMessageRequest{Text: text, Attachments: ids})
	if err != nil {
		return e.fail(err)
	}
	if *wait {
		return e.wait(ctx, pos[0], receipt.MessageID, *timeout)
	}
	if e.json {
		e.printJSON(receipt)
		return 0
	}
	e.table("MESSAGE\tSEQ\tSTATUS\tRESUMED", [][]string{{receipt.MessageID, strconv.FormatInt(receipt.Seq, 10), receipt.Status,
		strconv.FormatBool(receipt.ResumeTriggered)}})
	return 0
}

func wsGet(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	ws, err := e.c.GetWorkspace(ctx, pos[0])
	if err != nil {
		return e.fail(err)
	}
	e.showWorkspaces([]client.Workspace{*ws})
	return 0
}

func wsList(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	list, err := e.c.ListWorkspaces(ctx)
	if err != nil {
		return e.fail(err)
	}
	if !e.json {
		// People read the newest first, as the app lists them; the JSON is the API's
		// answer, oldest first, as scripts already read it.
		slices.Reverse(list)
	}
	e.showWorkspaces(list)
	return 0
}

func (e *apiEnv) showWorkspaces(list []client.Workspace) {
	if e.json {
		if len(list) == 1 {
			e.printJSON(map[string]any{"workspace": list[0]})
		} else {
			e.printJSON(map[string]any{"workspaces": list})
		}
		return
	}
	rows := make([][]string, len(list))
	for i, w := range list {
		last := "-"
		if w.LastTurn != nil {
			last = w.LastTurn.Outcome
		}
		push := "-" // the project does not push, or nothing was pushed yet
		if w.Pushed != nil {
			push = map[bool]string{true: "pushed", false: "refused"}[*w.Pushed]
		}
		pull := "-"
		if pr := w.PullRequest; pr != nil {
			pull = "#" + strconv.FormatInt(pr.Number, 10) + " " + pr.State
		}
		title := cmp.Or(w.Title, "-")
		rows[i] = []string{w.WorkspaceID, w.State, w.AgentStatus, w.Branch, last, push, pull, w.CreatedAt.Time().UTC().Format(time.RFC3339), title}
	}
	// The title last: it is the one column of any length.
	e.table("WORKSPACE\tSTATE\tAGENT\tBRANCH\tLAST TURN\tPUSH\tPULL REQUEST\tCREATED\tTITLE", rows)
}

func wsMessages(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	after := fs.Int64("after", 0, "only messages after this seq")
	follow := fs.Bool("follow", false, "keep printing new messages until interrupted")
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	seen := *after
	for {
		for m, err := range e.c.Messages(ctx, pos[0], seen) {
			if err != nil {
				if ctx.Err() != nil {
					return 0
				}
				return e.fail(err)
			}
			e.showMessage(m)
			seen = m.Seq
		}
		if !*follow {
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(time.Second):
		}
	}
}

func (e *apiEnv) showMessage(m client.Message) {
	if e.json {
		b, _ := jsonLine(m)
		fmt.Fprintln(e.stdout, b)
		return
	}
	state := m.Status
	if m.Outcome != "" {
		state = m.Outcome
	}
	fmt.Fprintf(e.stdout, "#%d %s (%s)\n%s\n\n", m.Seq, m.Role, state, m.Text)
}
