package agents

import (
	"bytes"
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

	"github.com/wshub/wshub/internal/procgroup"
)

// Output limits. An agent is untrusted code: whatever it prints, the hub keeps a
// bounded amount of it.
const (
	// maxStdout is how much of a command agent's standard output is kept (the head).
	maxStdout = 1 << 20
	// maxStderr is how much of any agent's standard error is kept (the tail).
	maxStderr = 64 << 10
	// maxLine is the longest JSON line a CLI parser looks at; longer lines (huge tool
	// results) are skipped whole.
	maxLine = 1 << 20
	// maxArgLen is Linux's limit on one argument (MAX_ARG_STRLEN = 32 pages, less the
	// terminating NUL); a prompt passed as an argument must stay under it.
	maxArgLen = 32*4096 - 1
	// defaultGrace is how long an interrupted agent has between SIGTERM and SIGKILL.
	defaultGrace = 2 * time.Second
)

// invocation is one agent process to run.
type invocation struct {
	path string
	// argv0 is the program's name for itself; "" is path.
	argv0 string
	args  []string
	dir   string
	env   []string
	stdin string
	// stdout receives standard output as it arrives, from one goroutine.
	stdout io.Writer
	// grace is the time between SIGTERM and SIGKILL when ctx ends.
	grace time.Duration
	// started, when set, is told the process's pid (its process group) once it runs.
	started func(pid int)
	// events, when set, receives what the agent writes to file descriptor 3 (the
	// command-agent event protocol), from one goroutine.
	events io.Writer
	// extra are more descriptors for the agent, from fd 4 on (the read end of the
	// approval decisions); run closes them once the agent has its copies.
	extra []*os.File
	// netns, when set, runs the command (bubblewrap's) in a user and network namespace
	// of its own with pasta attached: a "full" sandbox (netns.go).
	netns *netConfig
	// sandboxArgs, when set, are bubblewrap's options, given to it on the descriptor
	// after extra's (argsFD), which it reads and closes (--args), rather than on its
	// command line: bubblewrap is pid 1 in the sandbox, and anyone there can read its
	// /proc/1/cmdline, which would show the host's paths (the data directory) its
	// options hold.
	sandboxArgs []string
}

// exitStatus is how a process ended.
type exitStatus struct {
	// startErr is set when the process could not be started; nothing else is.
	startErr error
	// code is the exit code, or -1 when the process was ended by a signal.
	code int
	// signal names the signal that ended the process, if one did.
	signal string
	// interrupted is true when ctx ended (cancelled or past its deadline) before the
	// process did, so it was killed.
	interrupted bool
	// stderr is the tail of standard error (at most maxStderr bytes).
	stderr string
	// limit says which limit of its cgroup the turn ran into, "" when none.
	limit string
}

// run starts inv in its own process group and waits for it. When ctx ends, the whole
// group gets SIGTERM and, after inv.grace, SIGKILL, so an agent's children (shells,
// test runners, servers it started) go with it. When the leader exits on its own, what
// is left of its group is killed too: a turn leaves nothing running behind it, and no
// straggler keeps the output pipes (and so this call) open.
func run(ctx context.Context, inv invocation) exitStatus {
	if inv.grace <= 0 {
		inv.grace = defaultGrace
	}
	defer closeAll(inv.extra...) // on every path; the child has its own copies
	if err := ctx.Err(); err != nil {
		return exitStatus{code: -1, interrupted: true}
	}
	extra := append([]*os.File(nil), inv.extra...)
	if inv.sandboxArgs != nil {
		f, err := argsFile(inv.sandboxArgs)
		if err != nil {
			return exitStatus{startErr: err}
		}
		defer f.Close()
		extra = append(extra, f) // at argsFD
	}
	path, argv0, args, sys := inv.path, inv.argv0, inv.args, procgroup.Attr()
	var net netConfig
	ready := "-"
	if inv.netns != nil {
		var err error
		var remove func()
		if net, err = inv.netns.onHost(); err == nil {
			ready, remove, err = net.readyFIFO()
		}
		if err != nil {
			return exitStatus{startErr: err}
		}
		defer remove()
		path, argv0, args, sys = enterCommand(net, ready, append([]string{inv.path}, inv.args...))
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return exitStatus{startErr: err}
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return exitStatus{startErr: err}
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return exitStatus{startErr: err}
	}

	// The event pipe: fd 3 in the agent (bubblewrap passes it through). Always there,
	// and drained even when nobody listens, so an agent writing events never blocks.
	eventsR, eventsW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return exitStatus{startErr: err}
	}

	cmd := exec.Command(path, args...)
	if argv0 != "" {
		cmd.Args[0] = argv0
	}
	cmd.Dir = inv.dir
	cmd.Env = inv.env
	// *os.File ends: the child writes straight into the pipes, with no copying
	// goroutine that Wait would wait for.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.ExtraFiles = append([]*os.File{eventsW}, extra...)
	cmd.SysProcAttr = sys
	err = cmd.Start()
	closeAll(stdinR, stdoutW, stderrW, eventsW) // the child has its copies
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR, eventsR)
		return exitStatus{startErr: err}
	}
	pgid := cmd.Process.Pid
	var pasta *sandboxPasta
	if ready != "-" {
		if pasta, err = startPasta(net, pgid, ready); err != nil {
			_ = procgroup.Signal(pgid, syscall.SIGKILL)
			_ = cmd.Wait()
			closeAll(stdinW, stdoutR, stderrR, eventsR)
			return exitStatus{startErr: err}
		}
		defer pasta.stop() // once the sandbox has ended: its network with it
	}
	if inv.started != nil {
		inv.started(pgid)
	}
	// Each pipe end is closed once, by whichever path gets there first.
	closeStdin := sync.OnceFunc(func() { _ = stdinW.Close() })
	closeStdout := sync.OnceFunc(func() { _ = stdoutR.Close() })
	closeStderr := sync.OnceFunc(func() { _ = stderrR.Close() })
	closeEvents := sync.OnceFunc(func() { _ = eventsR.Close() })

	var readers sync.WaitGroup
	readers.Add(4)
	go func() {
		defer readers.Done()
		sink := inv.events
		if sink == nil {
			sink = io.Discard
		}
		_, _ = io.Copy(sink, newRateReader(eventsR, eventBytesPerSecond, eventBytesBurst))
		if f, ok := sink.(interface{ end() }); ok {
			f.end() // a last line without its newline still counts
		}
	}()
	go func() {
		defer readers.Done()
		// An agent that exits without reading its input makes this fail (EPIPE):
		// nothing to do about it.
		_, _ = io.WriteString(stdinW, inv.stdin)
		closeStdin()
	}()
	go func() {
		defer readers.Done()
		_, _ = io.Copy(inv.stdout, stdoutR)
	}()
	stderr := &tailBuffer{max: maxStderr}
	go func() {
		defer readers.Done()
		_, _ = io.Copy(stderr, stderrR)
	}()

	exited := make(chan struct{})
	var interrupted, pastaFailed bool
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-exited:
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
		t := time.NewTimer(inv.grace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			_ = procgroup.Signal(pgid, syscall.SIGKILL)
		}
	}()

	waitErr := cmd.Wait()
	close(exited)
	watch.Wait()
	// The leader is gone; end the rest of its group (ESRCH when there is none).
	_ = procgroup.Signal(pgid, syscall.SIGKILL)

	// Every writer of the pipes is dead now, unless a process left the group
	// (setsid): give the readers a moment, then close the pipes under them.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(inv.grace):
		closeStdin()
		closeStdout()
		closeStderr()
		closeEvents()
		<-drained
	}
	closeStdout()
	closeStderr()
	closeEvents()

	if cmd.ProcessState == nil {
		return exitStatus{startErr: waitErr, interrupted: interrupted, stderr: stderr.String()}
	}
	st := exitStatus{code: cmd.ProcessState.ExitCode(), interrupted: interrupted, stderr: stderr.String()}
	if pastaFailed {
		st.code, st.stderr = 125, strings.TrimSpace(st.stderr+"\n"+pasta.failure())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.signal = ws.Signal().String()
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		// Wait failed for another reason than the exit status: report it like a start
		// failure, since nothing is known about how the agent ended.
		st.startErr = waitErr
	}
	return st
}

// argsFD is the descriptor inv's sandboxArgs are on in its process: the one after the
// event pipe's (3) and extra's.
func (inv *invocation) argsFD() string { return strconv.Itoa(4 + len(inv.extra)) }

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

// headBuffer keeps the first max bytes written to it and drops the rest, always
// reporting success so the writer keeps draining the pipe.
type headBuffer struct {
	max int
	buf bytes.Buffer
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *headBuffer) String() string { return b.buf.String() }

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

// lineWriter splits what is written to it into lines and hands each complete line
// (without its newline) to fn. A line longer than max is dropped whole, so memory
// stays bounded however the agent prints. close hands over a last unterminated line.
type lineWriter struct {
	max      int
	fn       func(line []byte)
	buf      []byte
	skipping bool // inside an over-long line, waiting for its end
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		if !w.skipping {
			w.fn(w.buf)
		}
		w.buf, w.skipping = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) add(p []byte) {
	if w.skipping {
		return
	}
	if len(w.buf)+len(p) > w.max {
		w.buf, w.skipping = w.buf[:0], true
		return
	}
	w.buf = append(w.buf, p...)
}

func (w *lineWriter) close() {
	if !w.skipping && len(w.buf) > 0 {
		w.fn(w.buf)
	}
	w.buf, w.skipping = w.buf[:0], false
}
