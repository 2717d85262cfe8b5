package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wshub/wshub/client"
	"github.com/wshub/wshub/core"
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
	rows := make([][]string, len(list))
	for i, a := range list {
		rows[i] = []string{a, core.AgentProduct(a)}
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

func webhooksDeliveries(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	before := fs.String("before", "", "the nextBefore a previous page gave (its last line shows it): the older deliveries")
	limit := fs.Int("limit", 0, "at most this many deliveries, 1 to 200 (larger is capped at 200; default 50)")
	pos, ok := parseArgs(fs, args, 1)
	if !ok {
		return exitUsage
	}
	if given(fs, "limit") && *limit < 1 {
		fmt.Fprintln(e.stderr, "--limit must be from 1 to 200")
		return exitUsage
	}
	page, err := e.c.ListDeliveries(ctx, pos[0], *before, *limit)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(page)
		return 0
	}
	e.showDeliveries(page.Deliveries)
	if page.NextBefore != "" {
		more := "wshub webhooks deliveries " + pos[0] + " --before " + page.NextBefore
		if given(fs, "limit") {
			more += " --limit " + strconv.Itoa(*limit)
		}
		fmt.Fprintf(e.stdout, "\nolder: %s\n", more)
	}
	return 0
}

func webhooksRedeliver(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	pos, ok := parseArgs(fs, args, 2)
	if !ok {
		return exitUsage
	}
	d, err := e.c.Redeliver(ctx, pos[0], pos[1])
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"delivery": d})
		return 0
	}
	e.showDeliveries([]client.Delivery{*d})
	return 0
}

// showDeliveries prints a table of deliveries, each row followed by its attempts,
// indented: number, start, duration, and the status code or, with no response, the
// error. The rows are aligned by hand, since the attempts' lines between them would end
// tabwriter's columns.
func (e *apiEnv) showDeliveries(ds []client.Delivery) {
	rows := [][]string{{"DELIVERY", "EVENT", "STATUS", "ATTEMPTS", "CREATED", "NEXT RETRY"}}
	for _, d := range ds {
		next := "-"
		if d.NextAttemptAt != nil {
			next = d.NextAttemptAt.Time().UTC().Format(time.RFC3339)
		}
		rows = append(rows, []string{d.DeliveryID, d.EventType, d.Status, fmt.Sprintf("%d of %d", d.AttemptCount, d.MaxAttempts),
			d.CreatedAt.Time().UTC().Format(time.RFC3339), next})
	}
	lines := aligned(rows)
	fmt.Fprintln(e.stdout, lines[0])
	for i, d := range ds {
		fmt.Fprintln(e.stdout, lines[i+1])
		if n := d.EarlierAttempts(); n > 0 {
			fmt.Fprintf(e.stdout, "    (%d earlier %s not shown)\n", n, map[bool]string{true: "attempt", false: "attempts"}[n == 1])
		} else if len(d.Attempts) == 0 {
			fmt.Fprintln(e.stdout, "    no attempt yet")
		}
		attempts := make([][]string, len(d.Attempts))
		for j, a := range d.Attempts {
			result := oneLine(a.Error)
			if a.StatusCode != nil {
				result = strconv.Itoa(*a.StatusCode)
			}
			attempts[j] = []string{"#" + strconv.Itoa(a.Attempt), a.StartedAt.Time().UTC().Format(time.RFC3339),
				(time.Duration(a.DurationMS) * time.Millisecond).String(), result}
		}
		for _, l := range aligned(attempts) {
			fmt.Fprintln(e.stdout, "    "+l)
		}
	}
}

// aligned pads each column to its widest cell, two spaces apart.
func aligned(rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		var b strings.Builder
		for j, c := range r {
			b.WriteString(c)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(c)+2))
			}
		}
		out[i] = b.String()
	}
	return out
}

// oneLine keeps an attempt's error on its line: control characters (a newline, an
// escape sequence) become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// given reports whether the flag was set on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
