package hubtest

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// WithProcessProvider configures the `process` provider: workspaces created with
// providerId "process" run their turns in a real `wshub runtime` process, built once
// per test binary, talking to the hub over the runtime API.
func WithProcessProvider(t testing.TB) Option {
	bin := WshubBinary(t)
	return configOption(func(c *hub.Config) {
		if len(c.Providers) == 0 { // local, and process beside it
			c.Providers = []string{core.LocalProviderID}
		}
		c.Providers = append(c.Providers, machines.ProcessProviderID)
		c.RuntimeProgram = bin
	})
}

// WithFakeMachine configures the `process` provider with a machine whose program only
// keeps its token (MachineToken): the test then speaks the runtime API itself, step by
// step, as a runtime would.
func WithFakeMachine(t testing.TB) Option {
	prog := filepath.Join(t.TempDir(), "machine.sh")
	script := "#!/bin/sh\ncat <&3 > \"$WSHUB_RUNTIME_DIR/token\"\nexec 3<&-\nexec sleep 600\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return configOption(func(c *hub.Config) {
		if len(c.Providers) == 0 {
			c.Providers = []string{core.LocalProviderID}
		}
		if !slices.Contains(c.Providers, machines.ProcessProviderID) {
			c.Providers = append(c.Providers, machines.ProcessProviderID)
		}
		c.RuntimeProgram = prog
	})
}

// MachineToken is the runtime token the fake machine of workspace id was given.
func (h *Hub) MachineToken(t testing.TB, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(h.Config.DataDir, "machines", id, "token")); err == nil && len(b) > 0 {
			return string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the machine of %s got no token", id)
	return ""
}

var built struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// WshubBinary builds cmd/wshub once per test binary and returns its path. The
// binary has one place per user and checkout in the temporary directory, replaced by
// each build (go build is incremental; the rename is atomic, so test binaries
// building at once, or a runtime still running the previous one, are not disturbed):
// runs of the tests do not pile up 50 MB copies. Per checkout, because two clones (or
// worktrees) of different branches sharing one place replace each other's binary: a
// test would run the other branch's `wshub runtime` or `wshub approval-mcp`.
func WshubBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			built.err = err
			return
		}
		checkout := fnv.New32a()
		_, _ = checkout.Write([]byte(moduleRoot(wd)))
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("wshub-test-bin-%d-%08x", os.Getuid(), checkout.Sum32()))
		if built.err = os.MkdirAll(dir, 0o700); built.err != nil {
			return
		}
		tmp, err := os.CreateTemp(dir, "build-")
		if err != nil {
			built.err = err
			return
		}
		tmp.Close()
		built.out, built.err = exec.Command("go", "build", "-o", tmp.Name(), "github.com/wshub/wshub/cmd/wshub").CombinedOutput()
		if built.err == nil {
			built.bin = filepath.Join(dir, "wshub")
			built.err = os.Rename(tmp.Name(), built.bin)
		}
		if built.err != nil {
			_ = os.Remove(tmp.Name())
		}
	})
	if built.err != nil {
		t.Fatalf("go build wshub: %v: %s", built.err, built.out)
	}
	return built.bin
}

// moduleRoot is the directory holding go.mod at or above dir (dir itself when none).
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
