package browsertest_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/browsertest"
)

func TestStartSkipsWithAReasonWhenChromiumIsNotInstalled(t *testing.T) {
	t.Setenv(browsertest.EnvChromium, "")
	t.Setenv("PATH", t.TempDir())

	r := record(t, func(tb testing.TB) { browsertest.Start(tb) })
	if len(r.failed) != 0 || !slices.ContainsFunc(r.skipped, func(s string) bool { return strings.Contains(s, "scripts/chromium.sh") }) {
		t.Fatalf("Start without chromium did not skip pointing at scripts/chromium.sh:\n%s", r)
	}
}

func TestTheBrowserAndItsProfileAreGoneAfterTheTest(t *testing.T) {
	var dir string // the subtest's temporary directory, which holds the profile
	t.Run("browse", func(t *testing.T) {
		srv := site(t)
		b := browsertest.Start(t)
		b.Open(t, srv.URL+"/accessible")
		dir = filepath.Dir(t.TempDir())
		if len(processesIn(t, dir)) == 0 {
			t.Fatalf("no Chromium process has its profile in %s", dir)
		}
	})
	if pids := processesIn(t, dir); len(pids) > 0 {
		t.Errorf("Chromium processes %v still run after the test", pids)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the profile's directory %s is still there (%v)", dir, err)
	}
}

// processesIn lists the processes whose command line names a profile in dir, as
// every Chromium process's does.
func processesIn(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to list processes in: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte("--user-data-dir="+dir+string(filepath.Separator))) {
			pids = append(pids, pid)
		}
	}
	return pids
}
