package hubtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/hub"
)

// WithProcessProvider configures the `process` provider: workspaces created with
// providerId "process" run their turns in a real `wshub runtime` process, built once
// per test binary, talking to the hub over the runtime API.
func WithProcessProvider(t testing.TB) Option {
	bin := WshubBinary(t)
	return configOption(func(c *hub.Config) {
		c.Providers = append(c.Providers, machines.ProcessProviderID)
		c.RuntimeProgram = bin
	})
}

var built struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// WshubBinary builds cmd/wshub once per test binary and returns its path (kept in
// the system's temporary directory until the test binary's own cleanup).
func WshubBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "wshub-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "wshub")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, "github.com/wshub/wshub/cmd/wshub").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build wshub: %v: %s", built.err, built.out)
	}
	return built.bin
}
