//go:build linux

package sandbox

import (
	"context"
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wshub/wshub/core"
)

// A sandbox's /etc (one view of the host's, etcview.go) holds what etcPaths name and
// nothing else, read-only, with the host's content; a host file that changes is seen
// changed by the workspace's next turn, its prepared sandbox included, and a file
// that appears on the host appears too. The test changes /etc/hosts and
// /etc/timezone in an overlay of its own mount namespace: the machine's are left alone.
func TestSandboxEtcIsTheHostsAndFollowsItsChanges(t *testing.T) {
	needCgroups(t)
	if os.Getenv(inTestNetns) == "" {
		reexecUnshared(t, "--mount")
		return
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// /etc is an overlay in this namespace: written here, the machine's is untouched.
	check(syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""))
	layers := t.TempDir()
	check(syscall.Mount("tmpfs", layers, "tmpfs", 0, "size=16m"))
	t.Cleanup(func() { _ = syscall.Unmount(layers, syscall.MNT_DETACH) })
	for _, d := range []string{"upper", "work"} {
		check(os.Mkdir(filepath.Join(layers, d), 0o755))
	}
	check(syscall.Mount("overlay", "/etc", "overlay", 0, "lowerdir=/etc,upperdir="+filepath.Join(layers, "upper")+",workdir="+filepath.Join(layers, "work")))
	t.Cleanup(func() { _ = syscall.Unmount("/etc", syscall.MNT_DETACH) }) // before the layers go
	write(t, "/etc/hosts", "127.0.0.1 first\n")
	if err := os.Remove("/etc/timezone"); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}

	l := newHostLayout(t)
	r := keptHost(t, l, Config{})
	h := r.Host
	agent := `cat >/dev/null; echo "hosts=$(cat /etc/hosts)"; echo "tz=$(cat /etc/timezone 2>&1)"; echo "passwd=$(md5sum </etc/passwd)"
echo "etc=$(ls -A /etc | tr '\n' ' ')"; touch /etc/x 2>/dev/null && echo wrote=yes || echo wrote=no`
	turn := func() map[string]string {
		t.Helper()
		dir, home := filepath.Join(l.data, "workspaces", "ws_etc", "checkout"), filepath.Join(l.data, "workspaces", "ws_etc", "home")
		for _, d := range []string{dir, home} {
			check(os.MkdirAll(d, 0o700))
		}
		var out strings.Builder
		p := Process{Path: "/bin/sh", Args: []string{"-c", agent}, Stdout: &out, Env: []string{"PATH=" + h.ShownPath(DefaultPath)}}
		st := h.Run(context.Background(), "ws_etc", core.ProviderSize{}, h.Wrap(p, Mounts{Checkout: dir, Home: home, Network: core.NetworkNone}))
		if st.StartErr != nil || st.Code != 0 {
			t.Fatalf("expected the turn to complete, got %+v (said %q)", st, out.String())
		}
		got := map[string]string{}
		for line := range strings.Lines(out.String()) {
			k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
			got[k] = v
		}
		return got
	}

	var want []string
	for _, p := range etcPaths {
		if _, err := os.Stat(p); err == nil {
			want = append(want, filepath.Base(p))
		}
	}
	slices.Sort(want)
	first := turn()
	shown := strings.Fields(first["etc"])
	slices.Sort(shown)
	if !slices.Equal(shown, want) {
		t.Errorf("expected /etc to hold %v, got %v", want, shown)
	}
	hostPasswd, err := os.ReadFile("/etc/passwd")
	check(err)
	if first["hosts"] != "127.0.0.1 first" || first["wrote"] != "no" || first["passwd"] == "" || !strings.HasPrefix(first["tz"], "cat:") {
		t.Errorf("first turn: expected the host's hosts, no timezone and a read-only /etc, got %v", first)
	}
	if got := md5sumOf(hostPasswd); !strings.HasPrefix(first["passwd"], got) {
		t.Errorf("expected the host's /etc/passwd (md5 %s), got %q", got, first["passwd"])
	}

	b := h.preparedFor(t, "ws_etc")
	if b == nil || b.err != nil {
		t.Fatalf("expected the next turn prepared, got %+v", b)
	}
	write(t, "/etc/hosts", "127.0.0.1 second\n") // in place: the same file, changed
	write(t, "/etc/timezone", "Etc/Test\n")
	before := h.prepared.taken.Load()
	second := turn()
	if h.prepared.taken.Load() != before+1 {
		t.Errorf("expected the second turn run in its prepared sandbox")
	}
	if second["hosts"] != "127.0.0.1 second" || second["tz"] != "Etc/Test" {
		t.Errorf("second turn: expected the host's changed hosts and its new timezone, got %v", second)
	}
}

// md5sumOf is md5sum's hex digest of b.
func md5sumOf(b []byte) string { return fmt.Sprintf("%x", md5.Sum(b)) }
