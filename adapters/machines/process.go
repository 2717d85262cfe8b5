package machines

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/procgroup"
)

// ProcessProviderID is the provider whose machines are `wshub runtime` processes on
// the hub's host.
const ProcessProviderID = "process"

// exitStopped is wsruntime.ExitStopped: the hub told the runtime to stop; it is not
// restarted. (Kept here as a number: adapters do not import the runtime program.)
const exitStopped = 3

// Process is the `process` provider (core.RemoteMachines): each workspace's machine is
// a `wshub runtime` process on this host with a directory of its own under Dir. The
// process gets the runtime's URL, token and directory, PATH, and the agents' settings
// in its environment, nothing else of the hub's: no database URL, no content key, no
// git credentials. It proves the runtime API across a process boundary, and small
// deployments use it to keep agents' turns out of the hub's process.
//
// The provider supervises the processes it started: one that exits on its own (a
// crash, a kill) is started again with the same token after a short wait, as a
// kubelet restarts a container; one that exits ExitStopped is not. Runtime processes
// run in their own process group and outlive a hub that dies: they keep working with
// the hub that takes over, and a pid file lets that hub stop them.
type Process struct {
	Dir string
	// Program is the wshub executable the runtime runs from (os.Executable by default).
	Program string
	// HubURL is the hub's base URL as runtimes reach it (set before the first Start).
	HubURL string
	// Env is passed on to every runtime: its own settings (WSHUB_RUNTIME_HUB_LOST_AFTER)
	// and the agents' (WSHUB_AGENT_<N>_COMMAND, WSHUB_AGENT_ENV and the variables it
	// names, WSHUB_SANDBOX...).
	Env []string
	Log *slog.Logger

	mu    sync.Mutex
	procs map[string]*runtimeProc
}

var _ core.RemoteMachines = (*Process)(nil)

// runtimeProc is one supervised runtime process.
type runtimeProc struct {
	token string
	stop  chan struct{} // closed: do not restart
	done  chan struct{} // closed when the supervisor has ended
	mu    sync.Mutex
	cmd   *exec.Cmd
}

func (p *Process) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

func (p *Process) root(ws *core.Workspace) (string, error) {
	if !core.ValidID(ws.ID, core.PrefixWorkspace) {
		return "", fmt.Errorf("workspace id %q is not an id", ws.ID)
	}
	return filepath.Join(p.Dir, ws.ID), nil
}

// AppliesImages is false: a process runs on the hub's host as it is.
func (p *Process) AppliesImages() bool { return false }

// Start starts the workspace's runtime, replacing one that runs; an image is not
// applied (the workspace's statusDetail says so).
func (p *Process) Start(ctx context.Context, ws *core.Workspace, token, _ string) error {
	dir, err := p.root(ws)
	if err != nil {
		return err
	}
	if p.HubURL == "" {
		return errors.New("process provider: the hub's runtime URL is not set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &core.SetupError{StatusCode: core.FailureStatus(core.FailureProvision, core.ReasonDisk),
			Detail: "the workspace's directory could not be made on the host", Err: err}
	}
	if err := p.Stop(ctx, ws); err != nil {
		return err
	}
	rp := &runtimeProc{token: token, stop: make(chan struct{}), done: make(chan struct{})}
	if err := p.spawn(rp, dir); err != nil {
		return err
	}
	p.mu.Lock()
	if p.procs == nil {
		p.procs = map[string]*runtimeProc{}
	}
	p.procs[ws.ID] = rp
	p.mu.Unlock()
	go p.supervise(ws.ID, rp, dir)
	return nil
}

// spawn starts the runtime process and records its pid.
func (p *Process) spawn(rp *runtimeProc, dir string) error {
	prog := p.Program
	if prog == "" {
		var err error
		if prog, err = os.Executable(); err != nil {
			return err
		}
	}
	cmd := exec.Command(prog, "runtime")
	cmd.Dir = dir
	// The token goes through a pipe the runtime reads once at start, not the
	// environment: a process's initial environment stays readable in
	// /proc/<pid>/environ (Unsetenv does not clear it) by every process of its user.
	tokenR, tokenW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer tokenR.Close()                  // the child has its own descriptor
	_, err = tokenW.WriteString(rp.token) // a pipe's buffer holds it: the child reads it later
	if cerr := tokenW.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	cmd.ExtraFiles = []*os.File{tokenR}
	cmd.Env = append([]string{
		"WSHUB_RUNTIME_URL=" + p.HubURL, "WSHUB_RUNTIME_TOKEN_FD=3", "WSHUB_RUNTIME_DIR=" + dir,
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
	}, p.Env...)
	log, err := os.OpenFile(filepath.Join(dir, "runtime.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own descriptor
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procgroup.Attr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start runtime: %w", err)
	}
	rp.mu.Lock()
	rp.cmd = cmd
	rp.mu.Unlock()
	return os.WriteFile(filepath.Join(dir, "runtime.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}

// restartBackoff spaces the starts of a runtime that keeps exiting: 1 s doubling to
// 30 s.
var restartBackoff = core.Backoff{First: time.Second, Max: 30 * time.Second}

// supervise waits for the process and starts it again when it exits on its own.
func (p *Process) supervise(id string, rp *runtimeProc, dir string) {
	defer close(rp.done)
	for restarts := 1; ; restarts++ {
		rp.mu.Lock()
		cmd := rp.cmd
		rp.mu.Unlock()
		err := cmd.Wait()
		select {
		case <-rp.stop:
			return
		default:
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == exitStopped {
			p.log().Info("runtime stopped by the hub", "workspace", id)
			return
		}
		wait := restartBackoff.Delay(restarts, nil)
		p.log().Warn("runtime exited; starting it again", "workspace", id, "err", err, "in", wait)
		select {
		case <-rp.stop:
			return
		case <-time.After(wait):
		}
		if err := p.spawn(rp, dir); err != nil {
			p.log().Error("runtime could not be started again", "workspace", id, "err", err)
			return
		}
	}
}

// Stop ends the workspace's runtime (its process group: the agent goes too) and
// keeps its directory. A runtime a previous hub process started is found by its pid
// file.
func (p *Process) Stop(ctx context.Context, ws *core.Workspace) error {
	dir, err := p.root(ws)
	if err != nil {
		return err
	}
	p.mu.Lock()
	rp := p.procs[ws.ID]
	delete(p.procs, ws.ID)
	p.mu.Unlock()
	if rp != nil {
		close(rp.stop)
		rp.mu.Lock()
		cmd := rp.cmd
		rp.mu.Unlock()
		killGroup(cmd.Process.Pid)
		<-rp.done
		// The supervisor may have started it again meanwhile.
		rp.mu.Lock()
		if last := rp.cmd; last != cmd {
			killGroup(last.Process.Pid)
		}
		rp.mu.Unlock()
	} else if pid, ok := runtimeOf(dir); ok {
		killGroup(pid)
	}
	_ = os.Remove(filepath.Join(dir, "runtime.pid"))
	return nil
}

// killGroup ends a runtime's process group: SIGTERM, then SIGKILL.
func killGroup(pid int) {
	_ = procgroup.Signal(pid, syscall.SIGTERM)
	for i := 0; i < 50; i++ {
		if !procgroup.Alive(pid) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = procgroup.Signal(pid, syscall.SIGKILL)
}

// runtimeOf reads the pid file and checks that the process is still that runtime
// (its environment names dir), so a recycled pid is never killed.
func runtimeOf(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "runtime.pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, false
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil || !bytes.Contains(env, []byte("\x00WSHUB_RUNTIME_DIR="+dir+"\x00")) && !bytes.HasPrefix(env, []byte("WSHUB_RUNTIME_DIR="+dir+"\x00")) {
		return 0, false
	}
	return pid, true
}

// Delete stops the runtime and removes the workspace's directory.
func (p *Process) Delete(ctx context.Context, ws *core.Workspace) error {
	if err := p.Stop(ctx, ws); err != nil {
		return err
	}
	dir, err := p.root(ws)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// Close stops every runtime this provider started (tests; a hub that shuts down
// otherwise leaves its machines running, as a cluster would).
func (p *Process) Close() {
	p.mu.Lock()
	ids := make([]string, 0, len(p.procs))
	for id := range p.procs {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		_ = p.Stop(context.Background(), &core.Workspace{ID: id})
	}
}

// Provider describes the process provider for the catalog: this host's size.
func (p *Process) Provider(host core.ProviderSize) core.Provider {
	return core.Provider{ID: ProcessProviderID, DisplayName: "Runtime processes on this host", BillingSource: "service",
		Sizes: []core.ProviderSize{host}}
}
