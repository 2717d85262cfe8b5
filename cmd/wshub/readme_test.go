package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// syncBuffer is a bytes.Buffer safe to write from the hub and read from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// readmeBlock returns the first ```sh block after the heading in README.md.
func readmeBlock(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no heading %q", heading)
	}
	rest := readme[i:]
	start := strings.Index(rest, "```sh\n")
	if start < 0 {
		t.Fatalf("README.md: no sh block after %q", heading)
	}
	rest = rest[start+len("```sh\n"):]
	return rest[:strings.Index(rest, "```")]
}

// replaceLine swaps the line of block that starts with prefix, failing the test when
// there is none: the README changed and the test must follow.
func replaceLine(t *testing.T, block, prefix, with string) string {
	t.Helper()
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = with
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("README.md: expected a line starting %q in\n%s", prefix, block)
	return ""
}

// TestREADMESessions runs the README's quick start and its two curl sessions as a
// user would paste them: `wshub dev` (what `make run` starts) on a fresh database, the
// key taken from its banner, then each block's commands in bash, unchanged but for
// the key and address the user would fill in.
func TestREADMESessions(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's sessions need %s: %v", tool, err)
		}
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	demo, err := filepath.Abs("../../examples/demo-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	home := t.TempDir() // the user's checkout: .data lives here
	env := testEnviron("DATABASE_URL="+pgtest.NewDatabase(t), "WSHUB_DATA_DIR="+filepath.Join(home, ".data"), "WSHUB_ADDR="+addr,
		// What make run passes; no agent is bound and no agent's key is set, so the hub
		// binds the demo agent itself.
		"WSHUB_DEMO_AGENT="+demo, "WSHUB_AGENT_1_COMMAND=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "WSHUB_CONTENT_KEY=")

	ctx, cancel := context.WithCancel(context.Background())
	var banner, logs syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"dev"}, env, &banner, &logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("wshub dev did not stop")
		}
	})
	if !eventually.Within(time.Minute, func() bool {
		select {
		case code := <-done:
			t.Fatalf("wshub dev exited %d: %s", code, logs.String())
		default:
		}
		return ready("http://" + addr)
	}) {
		t.Fatalf("wshub dev did not become ready: %s", logs.String())
	}
	m := regexp.MustCompile(`export WSHUB_URL=http://\S+ WSHUB_API_KEY=(svc_[A-Za-z0-9_-]{43})\n`).FindStringSubmatch(banner.String())
	if m == nil || !strings.Contains(banner.String(), "API key   "+m[1]) {
		t.Fatalf("expected the banner to show the API key as the README says, got:\n%s", banner.String())
	}

	first := readmeBlock(t, readme, "### A first session with curl")
	first = replaceLine(t, first, "export WSHUB_API_KEY=svc_...", "export WSHUB_API_KEY="+m[1])
	first = replaceLine(t, first, "export B=http://127.0.0.1:8080/v1/api", "export B=http://"+addr+"/v1/api")
	second := readmeBlock(t, readme, "### Workspaces that really run")

	sh := exec.Command("bash", "-e", "-o", "pipefail", "-c", first+"\n"+second)
	sh.Dir = home
	sh.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	sh.Stdout, sh.Stderr = &out, &out
	timer := time.AfterFunc(2*time.Minute, func() { _ = sh.Process.Kill() })
	err = sh.Run()
	timer.Stop()
	got := out.String()
	if err != nil {
		t.Fatalf("the README's sessions failed: %v\n%s", err, got)
	}
	for _, want := range []string{
		"\n201\n", "\n200\n", // create, then its replay
		`"seq":1`, `"assetId":"asset_`, `"webhookId":"wh_`, `{"ok":true} 200`,
		"Noted in NOTES.md", "Remember the milk", // the demo agent's reply, and its commit
		`Created CONTRIBUTING.md`, `"outcome":"completed"`, "notes.txt: Use British spelling.", // the first session's turns
	} {
		if !strings.Contains(got, want) {
			t.Errorf("expected %q in the sessions' output:\n%s", want, got)
		}
	}
	if !strings.Contains(banner.String(), "agent_1  the demo agent") {
		t.Errorf("expected the banner to say the demo agent is agent_1, got:\n%s", banner.String())
	}
	if strings.Contains(got, `"error":`) {
		t.Errorf("expected no error answer in the sessions' output:\n%s", got)
	}

	// Ctrl-C with an event stream open: the stream ends at once and the hub stops
	// cleanly, without waiting out the stream's lifetime.
	ws := regexp.MustCompile(`"workspaceId":"(ws_\w+)"`).FindStringSubmatch(got)
	if ws == nil {
		t.Fatalf("expected a workspace in the sessions' output:\n%s", got)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/api/workspaces/"+ws[1]+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+m[1])
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("expected an event stream open, got %v %v", resp, err)
	}
	defer resp.Body.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("expected wshub dev to stop with exit 0, got %d: %s", code, logs.String())
		}
		done <- code // for the cleanup's wait
	case <-time.After(5 * time.Second): // the shutdown's own bound is 10 s
		t.Fatalf("expected wshub dev to stop at once with a stream open; it had not within 5 s")
	}
}

// docBlock returns the first ```sh block after the heading in a doc file.
func docBlock(t *testing.T, path, heading string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readmeBlock(t, string(raw), heading)
}

// TestOperationsWalkthrough runs docs/operations.md's first account, key and project as
// an operator would paste it, on a fresh database, with the built wshub on PATH: only
// the repository is one the test serves.
func TestOperationsWalkthrough(t *testing.T) {
	t.Parallel()
	block := docBlock(t, "../../docs/operations.md", "## The first account, key and project")
	repo := hubtest.GitRepo(t)
	block = replaceLine(t, block, "wshub admin project add --account \"$ACCOUNT\" --repository https://git.example.com/platform/app.git --push",
		"wshub admin project add --account \"$ACCOUNT\" --repository "+repo+" --push")
	bin := hubtest.WshubBinary(t)
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+block+"\necho \"walkthrough: $ACCOUNT $KEY\"")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "DATABASE_URL="+pgtest.NewEmptyDatabase(t),
		"WSHUB_DATA_DIR="+t.TempDir(), "WSHUB_CONTENT_KEY="+hubtest.NewContentKey(t))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	m := regexp.MustCompile(`walkthrough: (acct_\S+) (svc_\S+)\n`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("expected the account and key captured, got:\n%s", out)
	}
	if !strings.Contains(string(out), `"state": "ready"`) || !strings.Contains(string(out), `"name": "Platform team"`) {
		t.Fatalf("expected a ready project and the account listed, got:\n%s", out)
	}
}

// TestREADMEListsTheAdminCommands holds the README's list of operator commands to the
// usage made from the command table: each usage line is there (a note may follow,
// after two spaces), and every `wshub admin` line there is a usage line.
func TestREADMEListsTheAdminCommands(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Operator commands\n")
	_, block, ok2 := strings.Cut(section, "\n```\n")
	block, _, ok3 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md: expected a ``` block under ## Operator commands")
	}
	usage := adminUsageLines()
	listed := map[string]bool{}
	for _, l := range strings.Split(block, "\n") {
		cmd, ok := strings.CutPrefix(l, "wshub admin ")
		if !ok {
			continue
		}
		i := slices.IndexFunc(usage, func(u string) bool { return cmd == u || strings.HasPrefix(cmd, u+"  ") })
		if i < 0 {
			t.Errorf("README.md lists %q, which is no line of wshub admin --help", l)
			continue
		}
		listed[usage[i]] = true
	}
	for _, u := range usage {
		if !listed[u] {
			t.Errorf("README.md: expected the operator commands to list %q, as wshub admin --help does", "wshub admin "+u)
		}
	}
}
