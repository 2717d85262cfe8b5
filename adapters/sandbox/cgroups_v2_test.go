//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
)

// These tests run the cgroup v2 code on a unified hierarchy made of plain files in a
// temporary directory (the machines that run the suite mount cgroup v1, and no test may
// mount or reshape a hierarchy), with systemd played by fakeSystemd on a dbus-daemon of
// the test's own. What the kernel does with the files is not tested here (see
// docs/operations.md).

// sessionGroup is where a hub started from a terminal runs on a systemd desktop: the
// login session's scope, beside the shell.
const sessionGroup = "/user.slice/user-1000.slice/session-2.scope"

// fakeV2 is a unified hierarchy in a temporary directory, and the file naming the
// hub's own group in it.
type fakeV2 struct {
	mount, self string
}

func newFakeV2(t *testing.T) fakeV2 {
	t.Helper()
	dir := t.TempDir()
	f := fakeV2{mount: filepath.Join(dir, "cgroup"), self: filepath.Join(dir, "self-cgroup")}
	f.group(t, "/", "cpuset cpu io memory pids")
	return f
}

// group makes group with the controllers it may give its children and the processes
// in it.
func (f fakeV2) group(t *testing.T, group, controllers string, procs ...int) {
	t.Helper()
	dir := filepath.Join(f.mount, group)
	var list strings.Builder
	for _, p := range procs {
		fmt.Fprintf(&list, "%d\n", p)
	}
	for name, content := range map[string]string{"cgroup.controllers": controllers + "\n", "cgroup.procs": list.String(), "cgroup.subtree_control": ""} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runIn says the hub runs in group, as /proc/self/cgroup would.
func (f fakeV2) runIn(t *testing.T, group string) {
	t.Helper()
	if err := os.WriteFile(f.self, []byte("0::"+group+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f fakeV2) read(t *testing.T, group, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.mount, group, file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// host is the v2 code's view of f, asking scope for a delegated scope.
func (f fakeV2) host(pid int, scope func() (string, error), log *slog.Logger) v2Host {
	return v2Host{mount: f.mount, self: f.self, pid: pid, scope: scope, log: log}
}

// A hub started from a terminal shares the session's scope with the shell. It asks
// systemd for a transient scope of its own with Delegate=yes holding its pid, waits for
// the job, moves into the scope's hub leaf, and each turn's group gets the workspace's
// limits; it says so in one line.
func TestHubBesideAShellMovesIntoADelegatedScopeAndTurnsGetTheirLimits(t *testing.T) {
	t.Parallel()
	bus := startBus(t)
	fs := newFakeV2(t)
	pid, shell := os.Getpid(), 1 // the shell's pid: any other process of the group
	fs.group(t, sessionGroup, "cpu memory pids", shell, pid)
	fs.runIn(t, sessionGroup)
	scopeGroup := "/user.slice/user-1000.slice/user@1000.service/app.slice/wshub-" + fmt.Sprint(pid) + ".scope"
	systemd := newFakeSystemd(t, bus, systemdAnswers{started: func(unit string, pids []uint32) {
		// systemd makes the unit's group with what Delegate=yes gives and moves the pids.
		fs.group(t, scopeGroup, "cpu memory pids", pid)
		fs.runIn(t, scopeGroup)
	}})
	var logged bytes.Buffer
	scope := func() (string, error) { return startScope(context.Background(), bus, pid) }
	h, err := openV2(fs.host(pid, scope, slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatalf("expected the hub in a scope of its own, got %v", err)
	}

	asked, _ := systemd.calls()
	wantUnit := fmt.Sprintf("wshub-%d.scope", pid)
	if len(asked) != 1 || asked[0].name != wantUnit || asked[0].mode != "replace" {
		t.Fatalf("expected systemd asked once for %s in mode replace, got %+v", wantUnit, asked)
	}
	props := asked[0].props
	if props["Delegate"] != true || !slices.Equal(props["PIDs"].([]uint32), []uint32{uint32(pid)}) || props["DefaultDependencies"] != false {
		t.Errorf("expected Delegate=true, PIDs=[%d], DefaultDependencies=false, got %v", pid, props)
	}
	if h.group != scopeGroup {
		t.Errorf("expected turns' groups in %s, got %s", scopeGroup, h.group)
	}
	if got := fs.read(t, scopeGroup+"/hub", "cgroup.procs"); got != fmt.Sprint(pid) {
		t.Errorf("expected the hub moved into %s/hub, its cgroup.procs reads %q", scopeGroup, got)
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], wantUnit) || !strings.Contains(lines[0], "Delegate=yes") || !strings.Contains(lines[0], "holds other processes") {
		t.Errorf("expected one line naming the scope, Delegate=yes and why, got %q", logged.String())
	}

	g, err := h.create("ws1", limits{memoryBytes: 512 << 20, cpus: 2, pids: 100})
	if err != nil {
		t.Fatal(err)
	}
	turn := scopeGroup + "/turn-ws1"
	for file, want := range map[string]string{
		"memory.max": fmt.Sprint(512 << 20), "memory.swap.max": "0", "pids.max": "100", "cpu.max": "200000 100000",
	} {
		if got := fs.read(t, turn, file); got != want {
			t.Errorf("expected the turn's %s %q, got %q", file, want, got)
		}
	}
	control := strings.Fields(fs.read(t, scopeGroup, "cgroup.subtree_control"))
	slices.Sort(control)
	if want := []string{"+cpu", "+memory", "+pids"}; !slices.Equal(control, want) {
		t.Errorf("expected the scope's cgroup.subtree_control to enable %v, got %v", want, control)
	}
	if want := []string{filepath.Join(fs.mount, turn, "cgroup.procs")}; !slices.Equal(g.procs(), want) {
		t.Errorf("expected the turn to join %v, got %v", want, g.procs())
	}
}

// A hub that has a delegated group of its own (a service with Delegate=yes) takes it
// without a word to systemd, and a turn without a size gets only its process limit.
func TestHubInAGroupOfItsOwnAsksSystemdForNothing(t *testing.T) {
	t.Parallel()
	fs := newFakeV2(t)
	pid, service := os.Getpid(), "/system.slice/wshub.service"
	fs.group(t, service, "cpu memory pids", pid)
	fs.runIn(t, service)
	scope := func() (string, error) {
		t.Error("systemd asked for a scope by a hub that has a group of its own")
		return "", nil
	}
	h, err := openV2(fs.host(pid, scope, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if got := fs.read(t, service+"/hub", "cgroup.procs"); got != fmt.Sprint(pid) {
		t.Errorf("expected the hub moved into its leaf, cgroup.procs reads %q", got)
	}
	if _, err := h.create("ws2", limits{pids: 64}); err != nil {
		t.Fatal(err)
	}
	if got := fs.read(t, service+"/turn-ws2", "pids.max"); got != "64" {
		t.Errorf("expected pids.max 64, got %q", got)
	}
	for _, file := range []string{"memory.max", "memory.swap.max", "cpu.max"} {
		if _, err := os.Stat(filepath.Join(fs.mount, service, "turn-ws2", file)); err == nil {
			t.Errorf("expected no %s for a turn without a size", file)
		}
	}
}

// Where systemd gives no scope (no bus; systemd refuses; the job fails), the
// development hub runs turns without limits and says why in one sentence that says how
// to get them; a production hub refuses to start, saying what to do and what systemd
// answered.
func TestWithoutADelegatedScopeDevelopmentRunsUnlimitedAndServeRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// bus is the address the hub asks at, with fake systemd set up as the case says.
		bus   func(t *testing.T) (address string, systemd *fakeSystemd)
		cause string
	}{
		{"no bus", func(t *testing.T) (string, *fakeSystemd) {
			return "unix:path=" + filepath.Join(t.TempDir(), "bus"), nil
		}, "systemd over D-Bus"},
		{"systemd refuses", func(t *testing.T) (string, *fakeSystemd) {
			a := startBus(t)
			return a, newFakeSystemd(t, a, systemdAnswers{refuse: dbus.NewError("org.freedesktop.DBus.Error.AccessDenied", []any{"Access denied"})})
		}, "Access denied"},
		{"the job fails", func(t *testing.T) (string, *fakeSystemd) {
			a := startBus(t)
			return a, newFakeSystemd(t, a, systemdAnswers{result: "failed"})
		}, `its job ended "failed"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			address, systemd := c.bus(t)
			fs := newFakeV2(t)
			pid := os.Getpid()
			fs.group(t, sessionGroup, "cpu memory pids", 1, pid)
			fs.runIn(t, sessionGroup)
			open := func() (cgroupHierarchy, error) {
				scope := func() (string, error) { return startScope(context.Background(), address, pid) }
				return openV2(fs.host(pid, scope, slog.New(slog.DiscardHandler)))
			}

			h, missing, err := LimitsConfig{Optional: true}.open(open)
			if err != nil || h != nil {
				t.Fatalf("expected the development hub to run without limits, got %v, %v", h, err)
			}
			for _, want := range []string{"agent limits are off (development only)", "holds other processes", c.cause, "Delegate=yes"} {
				if !strings.Contains(missing, want) {
					t.Errorf("expected the development hub's line to say %q, got %q", want, missing)
				}
			}
			if strings.Contains(missing, "\n") {
				t.Errorf("expected one line, got %q", missing)
			}

			_, _, err = LimitsConfig{}.open(open)
			if err == nil {
				t.Fatal("expected a production hub to refuse to start")
			}
			for _, want := range []string{"holds other processes", c.cause, "a systemd service with Delegate=yes", "WSHUB_AGENT_LIMITS=off"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("expected the refusal to say %q, got %q", want, err)
				}
			}
			if systemd != nil {
				unit := fmt.Sprintf("wshub-%d.scope", pid)
				asked, resets := systemd.calls()
				if len(asked) != 2 || asked[0].name != unit {
					t.Errorf("expected systemd asked for %s by each hub, got %+v", unit, asked)
				}
				if c.name == "the job fails" && !slices.Contains(resets, unit) {
					t.Errorf("expected the failed %s reset, got resets %v", unit, resets)
				}
			}
		})
	}
}

// A user's systemd that delegates fewer controllers than turns need (an older
// user@.service) makes the scope, but the hub still refuses, naming the controller and
// where it is delegated.
func TestAScopeWithoutTheCPUControllerIsRefusedSayingWhereControllersAreDelegated(t *testing.T) {
	t.Parallel()
	bus := startBus(t)
	fs := newFakeV2(t)
	pid := os.Getpid()
	fs.group(t, sessionGroup, "cpu memory pids", 1, pid)
	fs.runIn(t, sessionGroup)
	scopeGroup := "/user.slice/user-1000.slice/user@1000.service/app.slice/wshub.scope"
	newFakeSystemd(t, bus, systemdAnswers{started: func(string, []uint32) {
		fs.group(t, scopeGroup, "memory pids", pid)
		fs.runIn(t, scopeGroup)
	}})
	scope := func() (string, error) { return startScope(context.Background(), bus, pid) }
	_, _, err := LimitsConfig{}.open(func() (cgroupHierarchy, error) {
		return openV2(fs.host(pid, scope, slog.New(slog.DiscardHandler)))
	})
	for _, want := range []string{fmt.Sprintf("wshub-%d.scope", pid), "no cpu controller", "user@.service's Delegate="} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("expected a refusal saying %q, got %v", want, err)
		}
	}
}
