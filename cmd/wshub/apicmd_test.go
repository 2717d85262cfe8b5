package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/client"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// wshubAPI runs a client command in-process with env, in on its standard input, and
// returns its exit code and output.
func wshubAPI(t *testing.T, env environ, in string, args ...string) (int, string, string) {
	t.Helper()
	env.stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := run(ctx, args, env, &out, &errb)
	return code, out.String(), errb.String()
}

func expectExit(t *testing.T, want int, code int, out, errs string, args ...string) {
	t.Helper()
	if code != want {
		t.Fatalf("wshub %s: expected exit %d, got %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), want, code, out, errs)
	}
}

func TestClientCommands(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		// Long enough for any quick turn on a busy machine (at 2 s, one was cut short; at
		// 10 s, one was too, with the whole suite and a soak running beside it).
		hubtest.WithConfig(func(c *hub.Config) { c.TurnTimeout = 20 * time.Second }))
	env := testEnviron("WSHUB_URL="+h.URL, "WSHUB_API_KEY="+h.Key)
	run := func(want int, in string, args ...string) (string, string) {
		t.Helper()
		code, out, errs := wshubAPI(t, env, in, args...)
		expectExit(t, want, code, out, errs, args...)
		return out, errs
	}

	// create --wait: the reply on stdout, exit 0; no progress lines (not a terminal).
	out, errs := run(0, "", "ws", "create", "--prompt", "write ci", "--agent", "agent_1", "--model", "m", "--wait")
	if out != "wrote ci.txt\n" || !strings.HasPrefix(errs, "workspace ws_") || strings.Contains(errs, "\r") {
		t.Fatalf("expected the reply alone on stdout, got %q / %q", out, errs)
	}
	id := strings.Fields(errs)[1]

	// send from stdin; an agent error exits 2 with the failure on stderr.
	out, _ = run(0, "write fromstdin\n", "ws", "send", id, "-", "--wait")
	if out != "wrote fromstdin.txt\n" {
		t.Fatalf("expected the stdin prompt's reply, got %q", out)
	}
	_, errs = run(2, "", "ws", "send", id, "fail now", "--wait")
	if !strings.Contains(errs, "agent_error: the agent tripped over something") {
		t.Fatalf("expected the turn failure on stderr, got %q", errs)
	}
	// interrupted (the turn outlives the hub's turn limit): 3; giving up first: 5.
	if _, errs = run(3, "", "ws", "send", id, "sleep 60", "--wait"); !strings.Contains(errs, "the turn was interrupted") {
		t.Fatalf("expected exit 3 said in words, got %q", errs)
	}
	_, errs = run(5, "", "ws", "send", id, "sleep 3", "--wait", "--timeout", "300ms")
	if !strings.Contains(errs, "timed out") {
		t.Fatalf("expected a timeout said, got %q", errs)
	}
	// refused by the API: 4 and the code.
	_, errs = run(4, "", "ws", "get", "ws_0000000000000000")
	if !strings.HasPrefix(errs, "cloud_workspace_not_found\n") {
		t.Fatalf("expected the code on stderr, got %q", errs)
	}

	// --file: create idle, upload, send the prompt with the files.
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("line of notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = run(0, "", "ws", "create", "--prompt", "attachments", "--file", notes, "--agent", "agent_1", "--model", "m", "--wait")
	if !strings.HasSuffix(strings.TrimSpace(out), "-notes.txt=line of notes") {
		t.Fatalf("expected the agent to read the file, got %q", out)
	}

	// Tables and JSON.
	out, _ = run(0, "", "ws", "list")
	if !strings.HasPrefix(out, "WORKSPACE") || strings.Count(out, "ws_") != 2 {
		t.Fatalf("expected a table of two workspaces, got %q", out)
	}
	// Newest first, as the app lists them (the JSON keeps the API's order, oldest first).
	if first := strings.Fields(strings.Split(out, "\n")[1]); len(first) == 0 || first[0] == id {
		t.Fatalf("expected the newest workspace first, not %s, got %q", id, out)
	}
	// Each named by its title, the first line of its first prompt.
	if lines := strings.Split(out, "\n"); !strings.HasSuffix(strings.TrimSpace(lines[0]), "TITLE") ||
		!strings.HasSuffix(strings.TrimSpace(lines[1]), " attachments") {
		t.Fatalf("expected a TITLE column with the newest's title, got %q", out)
	}
	out, _ = run(0, "", "ws", "get", id, "--json")
	var got struct {
		Workspace struct {
			WorkspaceID string `json:"workspaceId"`
		} `json:"workspace"`
	}
	if json.Unmarshal([]byte(out), &got) != nil || got.Workspace.WorkspaceID != id {
		t.Fatalf("expected the workspace as JSON, got %q", out)
	}
	out, _ = run(0, "", "ws", "messages", id, "--after", "1")
	if !strings.HasPrefix(out, "#2 assistant (completed)\nwrote ci.txt") {
		t.Fatalf("expected the conversation after seq 1, got %q", out)
	}
	for _, c := range [][]string{{"projects"}, {"agents"}, {"providers"}} {
		if out, _ := run(0, "", c...); !strings.Contains(out, "\n") || strings.Count(out, "\n") < 2 {
			t.Fatalf("%s: expected a header and rows, got %q", c[0], out)
		}
	}
	out, _ = run(0, "", "webhooks", "create", "--url", "https://hooks.example.com/ci", "--json")
	var wh struct {
		Webhook struct {
			WebhookID string `json:"webhookId"`
		} `json:"webhook"`
		Secret string `json:"secret"`
	}
	if json.Unmarshal([]byte(out), &wh) != nil || !strings.HasPrefix(wh.Secret, "whsec_") {
		t.Fatalf("expected the webhook and its secret, got %q", out)
	}
	if out, _ := run(0, "", "webhooks", "list"); !strings.Contains(out, wh.Webhook.WebhookID) {
		t.Fatalf("expected the webhook listed, got %q", out)
	}
	run(0, "", "webhooks", "delete", wh.Webhook.WebhookID)
	run(4, "", "webhooks", "delete", wh.Webhook.WebhookID)
}

func TestClientCommandUsage(t *testing.T) {
	t.Parallel()
	env := testEnviron("WSHUB_URL=", "WSHUB_API_KEY=")
	code, out, _ := wshubAPI(t, env, "", "ws", "create", "--help")
	if code != 0 || !strings.Contains(out, "example:\n  wshub ws create --prompt") {
		t.Fatalf("expected help with an example without any setting, got %d %q", code, out)
	}
	code, _, errs := wshubAPI(t, env, "", "ws", "list")
	if code != exitUsage || !strings.Contains(errs, "WSHUB_URL") {
		t.Fatalf("expected the settings asked for, got %d %q", code, errs)
	}
	env = env.with("WSHUB_URL=http://127.0.0.1:9", "WSHUB_API_KEY=svc_x")
	if code, _, _ := wshubAPI(t, env, "", "ws", "send", "only-one-arg"); code != exitUsage {
		t.Fatalf("expected a usage error for a missing argument, got %d", code)
	}
	if code, _, _ := wshubAPI(t, env, "", "ws", "frobnicate"); code != exitUsage {
		t.Fatalf("expected an unknown command refused, got %d", code)
	}
}

// CI can tell work that left the machine from work that did not: a completed turn
// whose push the repository refused exits 6, says so on stderr, and the workspace
// table shows the push result.
func TestWaitExitsSixWhenThePushWasRefused(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)))
	env := testEnviron("WSHUB_URL="+h.URL, "WSHUB_API_KEY="+h.Key)
	ctx := context.Background()
	for _, tt := range []struct {
		refuse bool
		exit   int
		push   string
	}{{false, 0, "pushed"}, {true, 6, "refused"}} {
		p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: hubtest.HostedRepository(t, tt.refuse), Push: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Service.Admin.PrepareProject(ctx, p); err != nil {
			t.Fatal(err)
		}
		args := []string{"ws", "create", "--project", p.ID, "--prompt", "write ci", "--agent", "agent_1", "--model", "m", "--wait"}
		code, out, errs := wshubAPI(t, env, "", args...)
		expectExit(t, tt.exit, code, out, errs, args...)
		if refused := strings.Contains(errs, "refused the push"); refused != tt.refuse {
			t.Fatalf("push refused %v: expected stderr to say so only then, got %q", tt.refuse, errs)
		}
		id := strings.Fields(errs)[1]
		code, out, errs = wshubAPI(t, env, "", "ws", "get", id)
		expectExit(t, 0, code, out, errs, "ws", "get", id)
		if lines := strings.Split(out, "\n"); !strings.Contains(lines[0], "PUSH") || !strings.Contains(lines[1], " "+tt.push+" ") {
			t.Fatalf("expected the table to show the push %s, got %q", tt.push, out)
		}
	}
}

// Every command and subcommand answers --help with its usage on stdout and exit 0,
// with no setting at all; a group named alone lists its commands as a usage error.
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Parallel()
	env := testEnviron("WSHUB_URL=", "WSHUB_API_KEY=", "DATABASE_URL=")
	cmds := [][]string{{"serve"}, {"migrate"}, {"dev"}, {"runtime"}, {"approval-mcp"}, {"version"}, {"admin"}, {"ws"}, {"webhooks"}}
	for _, n := range apiCommandOrder {
		cmds = append(cmds, strings.Fields(n))
	}
	for _, n := range adminCommands {
		cmds = append(cmds, append([]string{"admin"}, strings.Fields(n.name)...))
	}
	cmds = append(cmds, []string{"admin", "account"}, []string{"admin", "project"})
	for _, c := range cmds {
		for _, flag := range []string{"--help", "-h"} {
			args := append(append([]string{}, c...), flag)
			code, out, errs := wshubAPI(t, env, "", args...)
			if code != 0 || !strings.HasPrefix(out, "usage: wshub") {
				t.Fatalf("wshub %s: expected usage on stdout and exit 0, got %d\nstdout: %q\nstderr: %q", strings.Join(args, " "), code, out, errs)
			}
		}
	}
	// Every client command is in the usage of its group and of wshub itself.
	_, top, _ := wshubAPI(t, env, "", "--help")
	named := map[string]bool{}
	_, clients, _ := strings.Cut(top, "client commands")
	_, clients, _ = strings.Cut(clients, "\n")
	for _, part := range strings.FieldsFunc(clients, func(r rune) bool { return r == ',' || r == '\n' }) {
		switch f := strings.Fields(part); len(f) {
		case 1:
			named[f[0]] = true
		case 2:
			for _, sub := range strings.Split(f[1], "|") {
				named[f[0]+" "+sub] = true
			}
		}
	}
	for name := range apiCommands {
		if !slices.Contains(apiCommandOrder, name) {
			t.Errorf("wshub %s is missing from the client commands' usage", name)
		}
		if !named[name] {
			t.Errorf("wshub --help: expected %q named, got:\n%s", name, top)
		}
		if group, sub, ok := strings.Cut(name, " "); ok {
			if _, out, _ := wshubAPI(t, env, "", group, "--help"); !strings.Contains(out, "wshub "+group+" "+sub+" ") {
				t.Errorf("wshub %s --help: expected %q listed, got:\n%s", group, name, out)
			}
		}
	}
	for _, group := range []string{"ws", "webhooks"} {
		if code, _, errs := wshubAPI(t, env, "", group); code != exitUsage || !strings.Contains(errs, "wshub "+group+" create") {
			t.Fatalf("wshub %s: expected its commands listed as a usage error, got %d %q", group, code, errs)
		}
	}
}

// A script follows an endpoint's delivery log and redelivers: a receiver that refuses
// the first attempt shows it with its status code and the next retry; redeliver sends
// the event again and the log shows both attempts. A delivery attempted more often
// than the log shows lists its newest 20 and says how many came before. Refusals exit
// 4 with their code; usage errors 64.
func TestWebhookDeliveriesAndRedeliverCommands(t *testing.T) {
	t.Parallel()
	h, rc := refusingOnceHub(t)
	env := testEnviron("WSHUB_URL="+h.URL, "WSHUB_API_KEY="+h.Key)
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errs := wshubAPI(t, env, "", args...)
		expectExit(t, want, code, out, errs, args...)
		return out, errs
	}
	// logUntil reads the log (--json) until its one delivery has made n attempts.
	logUntil := func(wh string, n int) client.Delivery {
		t.Helper()
		return eventually.Value(t, 30*time.Second, fmt.Sprintf("one delivery with %d attempts", n), func() (client.Delivery, error) {
			out, _ := run(0, "webhooks", "deliveries", wh, "--json")
			var page client.DeliveryPage
			if err := json.Unmarshal([]byte(out), &page); err != nil {
				t.Fatalf("expected the log as JSON, got %q: %v", out, err)
			}
			if len(page.Deliveries) == 1 && page.Deliveries[0].AttemptCount >= n {
				return page.Deliveries[0], nil
			}
			return client.Delivery{}, fmt.Errorf("got %+v", page.Deliveries)
		})
	}

	out, _ := run(0, "webhooks", "create", "--url", rc.URL, "--json")
	var created struct {
		Webhook struct {
			WebhookID string `json:"webhookId"`
		} `json:"webhook"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("expected the webhook as JSON, got %q", out)
	}
	wh := created.Webhook.WebhookID
	if out, _ := run(0, "webhooks", "deliveries", wh); strings.TrimSpace(out) != "DELIVERY  EVENT  STATUS  ATTEMPTS  CREATED  NEXT RETRY" {
		t.Fatalf("expected an empty log to be its header alone, got %q", out)
	}
	run(0, "ws", "create", "--prompt", "write ci", "--agent", "agent_1", "--model", "m", "--wait")

	// The refused first attempt: pending, its retry due, the attempt with its code.
	d := logUntil(wh, 1)
	if d.Status != "pending" || d.NextAttemptAt == nil || len(d.Attempts) != 1 || d.Attempts[0].StatusCode == nil ||
		*d.Attempts[0].StatusCode != 503 || d.Attempts[0].ResponseExcerpt != "down for maintenance" {
		t.Fatalf("expected the delivery pending after a 503, got %+v", d)
	}
	out, _ = run(0, "webhooks", "deliveries", wh)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	retry := d.NextAttemptAt.Time().UTC().Format(time.RFC3339)
	if len(lines) != 3 || !strings.HasPrefix(lines[1], d.DeliveryID+"  workspace.turn.completed  pending ") ||
		!strings.Contains(lines[1], " 1 of 20 ") || !strings.HasSuffix(lines[1], "  "+retry) ||
		!regexp.MustCompile(`^    #1  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  [0-9.]+[mµn]?s  503$`).MatchString(lines[2]) {
		t.Fatalf("expected the delivery with its next retry %s and its attempt indented under it, got:\n%s", retry, out)
	}

	// Redeliver: due now, then acknowledged; the log shows both attempts.
	out, _ = run(0, "webhooks", "redeliver", wh, d.DeliveryID)
	if !strings.Contains(out, d.DeliveryID+"  workspace.turn.completed  pending ") || !strings.Contains(out, "    #1  ") {
		t.Fatalf("expected the redelivered delivery pending with its attempt, got:\n%s", out)
	}
	d = logUntil(wh, 2)
	out, _ = run(0, "webhooks", "deliveries", wh)
	if d.Status != "delivered" || d.NextAttemptAt != nil || !strings.Contains(out, " delivered ") || !strings.Contains(out, " 2 of 20 ") ||
		!strings.HasSuffix(strings.Split(out, "\n")[1], "  -") || !regexp.MustCompile(`\n    #2 +\S+ +\S+ +204\n`).MatchString(out) {
		t.Fatalf("expected the delivery delivered by its second attempt, with no retry, got %+v:\n%s", d, out)
	}

	// Twenty more: the log shows the newest 20 and says 2 came before them.
	for n := 3; n <= 22; n++ {
		run(0, "webhooks", "redeliver", wh, d.DeliveryID)
		d = logUntil(wh, n)
	}
	if len(d.Attempts) != 20 || d.Attempts[0].Attempt != 3 || d.Attempts[19].Attempt != 22 || d.EarlierAttempts() != 2 {
		t.Fatalf("expected attempts 3 to 22 of 22, got %d attempts from %d (count %d)", len(d.Attempts), d.Attempts[0].Attempt, d.AttemptCount)
	}
	out, _ = run(0, "webhooks", "deliveries", wh)
	if !strings.Contains(out, " 22 of 22 ") || !strings.Contains(out, "\n    (2 earlier attempts not shown)\n    #3 ") ||
		strings.Contains(out, "#1 ") || strings.Count(out, "\n    #") != 20 {
		t.Fatalf("expected the newest 20 attempts, after a line saying 2 earlier are not shown, got:\n%s", out)
	}

	// Pages: a full page names the command for the older ones, which is the last.
	out, _ = run(0, "webhooks", "deliveries", wh, "--limit", "1")
	older := regexp.MustCompile(`\nolder: wshub webhooks deliveries (\S+) --before (\S+) --limit 1\n$`).FindStringSubmatch(out)
	if older == nil || older[1] != wh {
		t.Fatalf("expected a full page to end with the command for the older deliveries, got:\n%s", out)
	}
	if out, _ := run(0, "webhooks", "deliveries", wh, "--before", older[2], "--limit", "1"); strings.Contains(out, "dlv_") || strings.Contains(out, "older:") {
		t.Fatalf("expected the page before the only delivery to be empty and the last, got:\n%s", out)
	}

	// Refusals and usage errors.
	for _, tt := range []struct {
		args []string
		exit int
		says string
	}{
		{[]string{"webhooks", "deliveries", "wh_0000000000000000"}, exitRefused, "webhook_not_found"},
		{[]string{"webhooks", "redeliver", wh, "dlv_0000000000000000"}, exitRefused, "not_found"},
		{[]string{"webhooks", "deliveries", wh, "--before", "not-a-cursor"}, exitRefused, "invalid_request"},
		{[]string{"webhooks", "deliveries", wh, "--limit", "0"}, exitUsage, "--limit must be from 1 to 200"},
		{[]string{"webhooks", "deliveries"}, exitUsage, "expected 1 argument(s), got 0"},
		{[]string{"webhooks", "redeliver", wh}, exitUsage, "expected 2 argument(s), got 1"},
	} {
		if _, errs := run(tt.exit, tt.args...); !strings.HasPrefix(errs, tt.says) {
			t.Errorf("wshub %s: expected stderr to start with %q, got %q", strings.Join(tt.args, " "), tt.says, errs)
		}
	}
}

// refusingOnceHub is a hub that runs turns and delivers webhooks to loopback, and a
// receiver that refuses each event's first attempt (503, with words) and takes the next.
func refusingOnceHub(t *testing.T) (*hubtest.Hub, *hubtest.Receiver) {
	t.Helper()
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure, c.WebhookPoll = true, 50*time.Millisecond }))
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		if r.Attempt() == 1 {
			w.WriteHeader(503)
			_, _ = io.WriteString(w, "down for maintenance")
			return
		}
		w.WriteHeader(204)
	})
	return h, rc
}

// In the clone make run ran in, the client commands find its development hub (its
// address and key in .data/dev.json) when WSHUB_URL is not set, and say so.
func TestClientCommandsFindTheDevelopmentHubOfTheClone(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	clone := t.TempDir()
	if err := os.MkdirAll(filepath.Join(clone, ".data"), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := json.Marshal(devState{AccountID: h.Account.ID, Key: h.Key, URL: h.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, ".data", "dev.json"), st, 0o600); err != nil {
		t.Fatal(err)
	}
	env := testEnviron("WSHUB_URL=", "WSHUB_API_KEY=", "WSHUB_DATA_DIR=")
	env.dir = clone // the clone's working directory, as t.Chdir would make it
	code, out, errs := wshubAPI(t, env, "", "projects")
	expectExit(t, 0, code, out, errs, "projects")
	if !strings.Contains(errs, "using the development hub of .data/dev.json ("+h.URL+")") || !strings.Contains(out, h.Project.ID) {
		t.Fatalf("expected the project listed from the clone's development hub, and a note saying so; got %q / %q", out, errs)
	}
}
