//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// startBus starts a dbus-daemon of the test's own, on a socket in a temporary
// directory, and returns its address. It skips where dbus-daemon is not installed
// (scripts/sandbox.sh installs it).
func startBus(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed (scripts/sandbox.sh installs Debian's dbus-daemon): the systemd scope is not tested here")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "bus.conf")
	err = os.WriteFile(config, fmt.Appendf(nil, `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`, filepath.Join(dir, "bus")), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file="+config, "--nofork", "--print-address")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The daemon prints its address once it listens.
	address, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(address)
}

// fakeSystemd stands in for systemd's manager on a test's bus: it owns
// org.freedesktop.systemd1 and answers StartTransientUnit as systemd does (a job's
// path, then the job's end in a JobRemoved signal), recording what it was asked.
type fakeSystemd struct {
	conn *dbus.Conn
	systemdAnswers

	mu     sync.Mutex
	asked  []askedUnit
	resets []string
}

// systemdAnswers say how fakeSystemd answers; fixed before it is on the bus.
type systemdAnswers struct {
	// refuse answers StartTransientUnit with this error instead of a job.
	refuse *dbus.Error
	// result is how the job ends ("done" when empty).
	result string
	// started does what systemd would do to the host when the unit starts (moves its
	// PIDs into the unit's group), before the job ends.
	started func(unit string, pids []uint32)
}

// askedUnit is one StartTransientUnit call: the unit, the mode and the properties.
type askedUnit struct {
	name, mode string
	props      map[string]any
}

func newFakeSystemd(t *testing.T, address string, answers systemdAnswers) *fakeSystemd {
	t.Helper()
	conn, err := dbus.Connect(address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeSystemd{conn: conn, systemdAnswers: answers}
	if err := conn.Export(f, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.systemd1", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.freedesktop.systemd1: %v (reply %d)", err, reply)
	}
	return f
}

// StartTransientUnit is systemd's method: name, mode, properties a(sv), auxiliary
// units a(sa(sv)); it returns the job's object path.
func (f *fakeSystemd) StartTransientUnit(name, mode string, props []sddbus.Property, _ []sddbus.PropertyCollection) (dbus.ObjectPath, *dbus.Error) {
	asked := askedUnit{name: name, mode: mode, props: map[string]any{}}
	for _, p := range props {
		asked.props[p.Name] = p.Value.Value()
	}
	f.mu.Lock()
	f.asked = append(f.asked, asked)
	id := uint32(len(f.asked))
	f.mu.Unlock()
	if f.refuse != nil {
		return "", f.refuse
	}
	job := dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id))
	result := f.result
	if result == "" {
		result = "done"
	}
	pids, _ := asked.props["PIDs"].([]uint32)
	// The job ends after the call has been answered, as systemd's does.
	go func() {
		if f.started != nil && result == "done" {
			f.started(name, pids)
		}
		_ = f.conn.Emit("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.JobRemoved", id, job, name, result)
	}()
	return job, nil
}

// ResetFailedUnit is systemd's method that forgets a failed unit.
func (f *fakeSystemd) ResetFailedUnit(name string) *dbus.Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resets = append(f.resets, name)
	return nil
}

// calls are the StartTransientUnit calls so far, and the units reset.
func (f *fakeSystemd) calls() ([]askedUnit, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked), slices.Clone(f.resets)
}
