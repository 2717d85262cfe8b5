package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"
)

func jsonLine(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func listProjects(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	list, err := e.c.ListProjects(ctx)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"projects": list})
		return 0
	}
	rows := make([][]string, len(list))
	for i, p := range list {
		rows[i] = []string{p.ProjectID, p.DisplayName, p.State, p.DefaultBranch, p.Repository}
	}
	e.table("PROJECT\tNAME\tSTATE\tDEFAULT BRANCH\tREPOSITORY", rows)
	return 0
}

func listAgents(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	list, err := e.c.ListAgents(ctx)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"agents": list})
		return 0
	}
	names := map[string]string{"agent_1": "Claude Code", "agent_2": "Codex", "agent_3": "Cursor Agent", "agent_4": "Grok CLI"}
	rows := make([][]string, len(list))
	for i, a := range list {
		rows[i] = []string{a, names[a]}
	}
	e.table("AGENT\tPROGRAM", rows)
	return 0
}

func listProviders(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	list, entitled, err := e.c.ListProviders(ctx)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"providers": list, "entitled": entitled})
		return 0
	}
	var rows [][]string
	for _, p := range list {
		for _, s := range p.Sizes {
			rows = append(rows, []string{p.ProviderID, p.DisplayName, s.SizeID, fmt.Sprintf("%g vCPU, %g MiB", s.VCPUCount, s.MemoryMiB), p.BillingSource})
		}
	}
	e.table("PROVIDER\tNAME\tSIZE\tRESOURCES\tBILLED BY", rows)
	return 0
}

func webhooksCreate(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	url := fs.String("url", "", "the receiver's https URL")
	desc := fs.String("description", "", "a label")
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	if *url == "" {
		fmt.Fprintln(e.stderr, "--url is required")
		return exitUsage
	}
	wh, secret, err := e.c.CreateWebhook(ctx, *url, *desc)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"webhook": wh, "secret": secret})
		return 0
	}
	e.table("WEBHOOK\tURL\tSECRET (shown once)", [][]string{{wh.WebhookID, wh.URL, secret}})
	return 0
}

func webhooksList(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	if _, ok := parseArgs(fs, args, 0); !ok {
		return exitUsage
	}
	list, err := e.c.ListWebhooks(ctx)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"webhooks": list})
		return 0
	}
	rows := make([][]string, len(list))
	for i, w := range list {
		rows[i] = []string{w.WebhookID, w.URL, w.Description, w.CreatedAt.Time().UTC().Format(time.RFC3339)}
	}
	e.table("WEBHOOK\tURL\tDESCRIPTION\tCREATED", rows)
	return 0
}

func webhooksDelete(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	if err := e.c.DeleteWebhook(ctx, pos[0]); err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"ok": true})
	}
	return 0
}
