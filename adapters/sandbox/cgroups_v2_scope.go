//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// A hub whose own v2 group cannot hold turns' groups asks systemd for a group of its
// own, the way rootless podman and runc's systemd driver do: a transient scope unit
// (StartTransientUnit) holding the hub's pid (PIDs), with Delegate=yes, so that systemd
// hands the scope's subtree and controllers to the hub and leaves them alone. The scope
// lives as long as a process of the hub's is in it.

// scopeWait bounds the wait for systemd's job that makes the scope (runc's too).
const scopeWait = 30 * time.Second

// systemV2Host is this machine's unified hierarchy, and systemd over D-Bus.
func systemV2Host(log *slog.Logger) v2Host {
	return v2Host{mount: cgroup2Mount, self: "/proc/self/cgroup", pid: os.Getpid(), scope: hubScope, log: log}
}

// hubScope asks systemd once per process: the hub's pid has one scope, and a refusal
// will not change while the process runs (hubs opened again in one process, as `wshub
// dev` does, then neither ask twice nor wait twice for a bus that is not there).
var hubScope = sync.OnceValues(func() (string, error) {
	address, err := systemdBus()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), scopeWait)
	defer cancel()
	return startScope(ctx, address, os.Getpid())
})

// systemdBus is where the systemd that manages the hub's processes listens: the system
// bus for root, else the user's session bus (where `systemctl --user` talks to the
// user's own manager).
func systemdBus() (string, error) {
	if os.Geteuid() == 0 {
		if a := os.Getenv("DBUS_SYSTEM_BUS_ADDRESS"); a != "" {
			return a, nil
		}
		return "unix:path=/run/dbus/system_bus_socket", nil
	}
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		return a, nil
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "bus")); err == nil {
			return "unix:path=" + filepath.Join(dir, "bus"), nil
		}
	}
	return "", errors.New("no user bus: DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus")
}

// startScope asks the systemd on the bus at address for the scope wshub-<pid>.scope
// holding pid, with Delegate=yes, and waits until its job has ended.
func startScope(ctx context.Context, address string, pid int) (string, error) {
	unit := fmt.Sprintf("wshub-%d.scope", pid)
	conn, err := sddbus.NewConnection(func() (*dbus.Conn, error) { return dialBus(ctx, address) })
	if err != nil {
		return "", fmt.Errorf("systemd over D-Bus (%s): %w", address, err)
	}
	defer conn.Close()
	props := []sddbus.Property{
		sddbus.PropDescription("wshub: the hub and its agents' turns"),
		{Name: "PIDs", Value: dbus.MakeVariant([]uint32{uint32(pid)})},
		{Name: "Delegate", Value: dbus.MakeVariant(true)},
		// Not stopped with the session's targets, as podman's and cri-o's scopes.
		{Name: "DefaultDependencies", Value: dbus.MakeVariant(false)},
	}
	// Buffered: go-systemd sends the job's result while holding its listener's lock.
	done := make(chan string, 1)
	if _, err := conn.StartTransientUnitContext(ctx, unit, "replace", props, done); err != nil {
		return "", fmt.Errorf("start transient unit %s: %w", unit, err)
	}
	select {
	case result := <-done:
		if result != "done" {
			// A failed unit would refuse the name to the next start.
			_ = conn.ResetFailedUnitContext(ctx, unit)
			return "", fmt.Errorf("start transient unit %s: its job ended %q", unit, result)
		}
	case <-ctx.Done():
		return "", fmt.Errorf("start transient unit %s: no end of its job: %w", unit, ctx.Err())
	}
	return unit, nil
}

// dialBus connects to the bus at address as go-systemd's own connections do: EXTERNAL
// authentication by uid (no user name lookup), then Hello.
func dialBus(ctx context.Context, address string) (*dbus.Conn, error) {
	c, err := dbus.Dial(address, dbus.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if err = c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err == nil {
		err = c.Hello()
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
