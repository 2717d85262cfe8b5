package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wshub/wshub/core"
)

// A hub started with a descriptor open on a host file (`wshub serve 7>>file`, or any
// supervisor that leaks one) holds it without close-on-exec, as an inherited descriptor
// is: an agent must not be able to write to it, whatever its network.
func TestSandboxAgentCannotWriteToADescriptorTheHubInherited(t *testing.T) {
	host := filepath.Join(t.TempDir(), "host-file")
	write(t, host, "")
	// Opened without O_CLOEXEC: the state of a descriptor the hub's launcher passed.
	fd, err := unix.Open(host, unix.O_WRONLY|unix.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	l := newHostLayout(t)
	r := sandboxed(t, l, script(t, fmt.Sprintf("cat >/dev/null\nif echo pwned >&%d; then echo wrote; else echo refused; fi", fd)))
	for _, network := range []string{core.NetworkNone, core.NetworkFull} {
		res := r.RunTurn(context.Background(), l.turn(network, "write"))
		b, err := os.ReadFile(host)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reply != "refused" || len(b) != 0 {
			t.Errorf("network %s: expected the agent refused descriptor %d and the host file empty, got reply %q, file %q",
				network, fd, res.Reply, b)
		}
	}
}
