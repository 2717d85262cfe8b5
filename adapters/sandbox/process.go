package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/wshub/wshub/internal/procgroup"
)

// Bounds of what the hub keeps of a process: it runs untrusted code, and whatever
// it prints, the hub holds a bounded amount of it.
const (
	// maxStderr is how much of a process's standard error is kept (the tail).
	maxStderr = 64 << 10
	// DefaultGrace is how long an interrupted process has between SIGTERM and SIGKILL.
	DefaultGrace = 2 * time.Second
)

// Process is one process to run in a turn's sandbox (Host.Wrap, Host.Run).
type Process struct {
	Path string
	// Argv0 is the program's name for itself; "" is Path.
	Argv0 string
	Args  []string
	Dir   string
	Env   []string
	Stdin string
	// Stdout receives standard output as it arrives, from one goroutine.
	Stdout io.Writer
	// Grace is the time between SIGTERM and SIGKILL when ctx ends (0: DefaultGrace).
	Grace time.Duration
	// started, when set, is told the process's pid (its process group) once it runs.
	started func(pid int)
	// Events, when set, receives what the process writes to file descriptor 3, from
	// one goroutine, at most eventBytesPerSecond: the command-agent event protocol.
	// Every write has been made when Run returns.
	Events io.Writer
	// Extra are more descriptors for the process, from fd 4 on (the read end of the
	// approval decisions); Run closes them once the process has its copies.
	Extra []*os.File
	// netns, when set, runs the command (bubblewrap's) in a user and network namespace
	// of its own with pasta attached: a "full" sandbox (netns.go).
	netns *netConfig
	// sandboxArgs, when set, are bubblewrap's options, given to it on the descriptor
	// after Extra's (argsFD), which it reads and closes (--args), rather than on its
	// command line: bubblewrap is pid 1 in the sandbox, and anyone there can read its
	// /proc/1/cmdline, which would show the host's paths (the data directory) its
	// options hold.
	sandboxArgs []string
	// kept, when set, is the workspace's kept namespace pair the command runs in
	// (netkeep.go), with its pasta: watched as a one-off turn's, but left running.
	kept *keptNet
}

// Exit is how a process ended.
type Exit struct {
	// StartErr is set when the process could not be started; nothing else is.
	StartErr error
	// Code is the exit code, or -1 when the process was ended by a signal.
	Code int
	// Signal names the signal that ended the process, if one did.
	Signal string
	// Interrupted is true when ctx ended (cancelled or past its deadline) before the
	// process did, so it was killed.
	Interrupted bool
	// Stderr is the tail of standard error (at most maxStderr bytes).
	Stderr string
	// Limit says which limit of its cgroup the turn ran into, "" when none.
	Limit string
}

// run starts inv in its own process group and waits for it. When ctx ends, the whole
// group gets SIGTERM and, after inv.Grace, SIGKILL, so an agent's children (shells,
// test runners, servers it started) go with it. When the leader exits on its own, what
// is left of its group is killed too: a turn leaves nothing running behind it, and no
// straggler keeps the output pipes (and so this call) open.
func run(ctx context.Context, inv Process) Exit {
	if inv.Grace <= 0 {
		inv.Grace = DefaultGrace
	}
	defer closeAll(inv.Extra...) // on every path; the child has its own copies
	if err := ctx.Err(); err != nil {
		return Exit{Code: -1, Interrupted: true}
	}
	extra := append([]*os.File(nil), inv.Extra...)
	if inv.sandboxArgs != nil {
		f, err := argsFile(inv.sandboxArgs)
		if err != nil {
			return Exit{StartErr: err}
		}
		defer f.Close()
		extra = append(extra, f) // at argsFD
	}
	path, argv0, args, sys := inv.Path, inv.Argv0, inv.Args, procgroup.Attr()
	var net netConfig
	ready := "-"
	if inv.netns != nil {
		var err error
		var remove func()
		if net, err = inv.netns.onHost(); err == nil {
			ready, remove, err = net.readyFIFO()
		}
		if err != nil {
			return Exit{StartErr: err}
		}
		defer remove()
		path, argv0, args, sys = enterCommand(net, ready, append([]string{inv.Path}, inv.Args...))
	}
	if inv.kept != nil {
		path, args = inv.kept.enter(path, args)
		argv0 = ""
	}
	c, err := startChild(path, argv0, args, inv.Dir, inv.Env, sys, extra)
	if err != nil {
		return Exit{StartErr: err}
	}
	pasta := inv.kept.servedBy()
	if ready != "-" {
		if pasta, err = startPasta(net, c.pgid, ready); err != nil {
			c.kill()
			return Exit{StartErr: err}
		}
		defer pasta.stop() // once the sandbox has ended: its network with it
	}
	return c.watch(ctx, inv, pasta)
}

// child is a started process of a turn, in a process group of its own, with the hub's
// ends of its standard descriptors and event pipe.
type child struct {
	cmd                               *exec.Cmd
	pgid                              int
	stdinW, stdoutR, stderrR, eventsR *os.File
	// done is closed once the process has been waited for (waitErr, cmd.ProcessState).
	done    chan struct{}
	waitErr error
}

// startChild starts path with pipes on its standard descriptors, the event pipe on
// fd 3 and extra from fd 4 on, in its own process group (sys), and waits for it in the
// background.
func startChild(path, argv0 string, args []string, dir string, env []string, sys *syscall.SysProcAttr, extra []*os.File) (*child, error) {
	var ends [8]*os.File // stdin r/w, stdout r/w, stderr r/w, events r/w
	for i := 0; i < len(ends); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(ends[:i]...)
			return nil, err
		}
		ends[i], ends[i+1] = r, w
	}
	stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW, eventsR, eventsW := ends[0], ends[1], ends[2], ends[3], ends[4], ends[5], ends[6], ends[7]
	cmd := exec.Command(path, args...)
	if argv0 != "" {
		cmd.Args[0] = argv0
	}
	cmd.Dir = dir
	cmd.Env = env
	// *os.File ends: the child writes straight into the pipes, with no copying
	// goroutine that Wait would wait for. The event pipe is fd 3 in the agent
	// (bubblewrap passes it through): always there, and drained even when nobody
	// listens, so an agent writing events never blocks.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.ExtraFiles = append([]*os.File{eventsW}, extra...)
	cmd.SysProcAttr = sys
	err := cmd.Start()
	closeAll(stdinR, stdoutW, stderrW, eventsW) // the child has its copies
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR, eventsR)
		return nil, err
	}
	c := &child{cmd: cmd, pgid: cmd.Process.Pid, stdinW: stdinW, stdoutR: stdoutR, stderrR: stderrR, eventsR: eventsR, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// exited reports whether the child has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// kill ends the child's group, waits for the child and closes the hub's ends.
func (c *child) kill() {
	_ = procgroup.Signal(c.pgid, syscall.SIGKILL)
	<-c.done
	closeAll(c.stdinW, c.stdoutR, c.stderrR, c.eventsR)
}

// watch runs the child as inv's turn: it is given inv.Stdin, its output goes to
// inv.Stdout and inv.Events, and when ctx ends (or pasta does) its group is ended. It
// returns once the child has ended and its pipes are drained.
func (c *child) watch(ctx context.Context, inv Process, pasta *sandboxPasta) Exit {
	if inv.started != nil {
		inv.started(c.pgid)
	}
	pgid := c.pgid
	// Each pipe end is closed once, by whichever path gets there first.
	closeStdin := sync.OnceFunc(func() { _ = c.stdinW.Close() })
	closeStdout := sync.OnceFunc(func() { _ = c.stdoutR.Close() })
	closeStderr := sync.OnceFunc(func() { _ = c.stderrR.Close() })
	closeEvents := sync.OnceFunc(func() { _ = c.eventsR.Close() })

	var readers sync.WaitGroup
	readers.Add(4)
	go func() {
		defer readers.Done()
		sink := inv.Events
		if sink == nil {
			sink = io.Discard
		}
		_, _ = io.Copy(sink, newRateReader(c.eventsR, eventBytesPerSecond, eventBytesBurst))
	}()
	go func() {
		defer readers.Done()
		// An agent that exits without reading its input makes this fail (EPIPE):
		// nothing to do about it.
		_, _ = io.WriteString(c.stdinW, inv.Stdin)
		closeStdin()
	}()
	go func() {
		defer readers.Done()
		_, _ = io.Copy(inv.Stdout, c.stdoutR)
	}()
	stderr := &tailBuffer{max: maxStderr}
	go func() {
		defer readers.Done()
		_, _ = io.Copy(stderr, c.stderrR)
	}()

	var interrupted, pastaFailed bool
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-c.done:
			return
		case <-pasta.endedEarly():
			// The sandbox has no network any more: it ends, and says why.
			pastaFailed = true
			_ = procgroup.Signal(pgid, syscall.SIGKILL)
			return
		case <-ctx.Done():
		}
		interrupted = true
		_ = procgroup.Signal(pgid, syscall.SIGTERM)
		t := time.NewTimer(inv.Grace)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
			_ = procgroup.Signal(pgid, syscall.SIGKILL)
		}
	}()

	<-c.done
	waitErr := c.waitErr
	watch.Wait()
	// The leader is gone; end the rest of its group (ESRCH when there is none).
	_ = procgroup.Signal(pgid, syscall.SIGKILL)

	// Every writer of the pipes is dead now, unless a process left the group
	// (setsid): give the readers a moment, then close the pipes under them.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(inv.Grace):
		closeStdin()
		closeStdout()
		closeStderr()
		closeEvents()
		<-drained
	}
	closeStdout()
	closeStderr()
	closeEvents()

	cmd := c.cmd
	if cmd.ProcessState == nil {
		return Exit{StartErr: waitErr, Interrupted: interrupted, Stderr: stderr.String()}
	}
	st := Exit{Code: cmd.ProcessState.ExitCode(), Interrupted: interrupted, Stderr: stderr.String()}
	if pastaFailed {
		st.Code, st.Stderr = 125, strings.TrimSpace(st.Stderr+"\n"+pasta.failure())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Signal = ws.Signal().String()
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		// Wait failed for another reason than the exit status: report it like a start
		// failure, since nothing is known about how the agent ended.
		st.StartErr = waitErr
	}
	return st
}

// argsFD is the descriptor inv's sandboxArgs are on in its process: the one after the
// event pipe's (3) and extra's.
func (inv *Process) argsFD() string { return strconv.Itoa(4 + len(inv.Extra)) }

// argsFile is a memory file holding args as bubblewrap's --args reads them, each
// ended by a NUL, read from its start.
func argsFile(args []string) (*os.File, error) {
	fd, err := memfd("wshub-sandbox-args")
	if err != nil {
		return nil, fmt.Errorf("the sandbox's options: %w", err)
	}
	f := os.NewFile(uintptr(fd), "wshub-sandbox-args")
	if _, err := io.WriteString(f, strings.Join(args, "\x00")+"\x00"); err != nil {
		f.Close()
		return nil, fmt.Errorf("the sandbox's options: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("the sandbox's options: %w", err)
	}
	return f, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= b.max {
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *tailBuffer) String() string { return strings.ToValidUTF8(string(b.buf), "\uFFFD") }

// Bounds of what the hub reads from a process's fd 3: a flood costs the process's own
// time, not the hub's CPU.
const (
	eventBytesPerSecond = 1 << 20
	eventBytesBurst     = 1 << 20
)

// rateReader reads from r at most as fast as lim allows, so a process writing events
// faster waits on its own pipe.
type rateReader struct {
	r   io.Reader
	lim *rate.Limiter
}

func newRateReader(r io.Reader, perSecond, burst int) *rateReader {
	return &rateReader{r: r, lim: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

func (rr *rateReader) Read(p []byte) (int, error) {
	if len(p) > rr.lim.Burst() {
		p = p[:rr.lim.Burst()]
	}
	n, err := rr.r.Read(p)
	if n > 0 {
		_ = rr.lim.WaitN(context.Background(), n) // n <= burst: never refused
	}
	return n, err
}
