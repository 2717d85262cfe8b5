package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// make test marks where each phase starts and ends with a table: each phase's time,
// and under go test its slowest packages from go test's own output, slowest first.
func TestPhasesEndsWithATableOfEachPhase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	phases := func(at int, args ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{"phases.sh"}, args...)...)
		cmd.Env = append(os.Environ(), "WSHUB_PHASES_DIR="+dir, "WSHUB_PHASES_NOW="+strconv.Itoa(at), "WSHUB_PHASES_SLOWEST=3")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("phases.sh %v: %v\n%s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out)) + stderr.String()
	}
	phases(1000, "sandbox")
	phases(1002, "lint")
	// Parts of a phase that ran side by side, each with its own time, a failed one marked.
	phases(1003, "step", "engine: Gitea", "95", "0")
	phases(1004, "step", "engine: S3", "7", "1")
	phases(1100, "go test")
	log := phases(1100, "log")
	goTest := "ok  \tgithub.com/wshub/wshub/api\t61.500s\n" +
		"--- FAIL: TestSomething (0.00s)\n" +
		"ok  \tgithub.com/wshub/wshub/hub/turns\t90.400s\n" +
		"ok  \tgithub.com/wshub/wshub/core\t(cached)\n" +
		"FAIL\tgithub.com/wshub/wshub/web\t12.000s\n"
	if err := os.WriteFile(log, []byte(goTest), 0o644); err != nil {
		t.Fatal(err)
	}
	phases(1700, "fuzz")
	table := phases(1765, "end")
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && !strings.HasPrefix(line, "==>") {
			rows = append(rows, strings.Join(fields, " "))
		}
	}
	want := []string{"phase time", "sandbox 2s", "lint 1m 38s", "engine: Gitea 1m 35s", "engine: S3 (failed) 7s", "go test 10m 00s", "hub/turns 90.4s", "api 61.5s", "web 12.0s", "fuzz 1m 05s", "total 12m 45s"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("expected the table\n%s\ngot\n%s", strings.Join(want, "\n"), table)
	}

	// The next run starts afresh, and a failed phase says so.
	phases(2000, "lint")
	table = phases(2010, "failed")
	if !strings.Contains(table, "lint (failed)") || strings.Contains(table, "sandbox") || !strings.Contains(table, "total") {
		t.Fatalf("expected a new table of the failed lint alone, got\n%s", table)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "go-test.log")); err != nil || len(b) != 0 {
		t.Fatalf("expected the new run's go test log empty, got %q (%v)", b, err)
	}
	if strings.Contains(table, "engine:") {
		t.Fatalf("expected the new run's table without the old run's steps, got\n%s", table)
	}
}
