//go:build linux

package sandbox

import (
	"github.com/wshub/wshub/internal/shellword"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wshub/wshub/internal/procgroup"
)

// When a workspace's turn ends, its next turn's sandbox is made, so the next turn does
// not wait for what that costs: on cgroup v1 a process joining a group waits for the
// kernel (an RCU grace period per hierarchy: 15 ms p50 measured for the three, the
// largest part of a trivial turn's overhead), entering a kept namespace pair is one
// more program start, and bubblewrap's namespaces and mounts are some 7 ms more. The
// prepared sandbox is what the workspace's last turn ran in, made again the same way:
// its first process joins a cgroup made for it (with the last turn's limits), in the
// workspace's kept pair for a "full" network, and execs bubblewrap with the last
// turn's options; inside, where the turn's program would start, /bin/sh waits on a pipe
// of the hub's. The turn hands it its environment and program, which the shell
// exports and execs. Its descriptors are the prepared process's; the turn's extra ones
// (the approval decisions) are copied into pipes it was given at the same numbers.
// Nothing of the agent, and nothing of the turn, is there before the turn asks: the
// sandbox is empty (its /tmp fresh) and its binds are live views of the checkout, the
// home and the system paths.
//
// A prepared sandbox fits a turn with the same kept pair, limits, number of extra
// descriptors and bubblewrap options, whose bound files and directories are still the
// ones bound (the same inodes: a checkout made anew is not the one bound); a turn that
// differs ends it and runs the one-off way. As many are kept as namespace pairs
// (Config.KeptNetworks), the oldest ended first, each ended after the same idle time.
// The agent's environment differs in one way from a one-off turn's: PWD is its working
// directory, /workspace, where the one-off way passes on the joining shell's "/".

// preparedName is the name ($0) of the shell waiting in a prepared sandbox.
const preparedName = "wshub-sandbox-next"

// innerScript is what waits inside a prepared sandbox, given the path of the command's
// pipe (/proc/self/fd/N): it sources the turn's command (commandScript), which execs the
// turn's program. A pipe closed with nothing written (the sandbox ended unused) falls
// through to the exit.
const innerScript = `. "$1"
exit 125
`

// shellName is what an environment variable's name must be for the prepared shell to
// export it; a turn with another name runs the one-off way.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// preparedShape is what a prepared sandbox was made for.
type preparedShape struct {
	kept    *keptNet // nil: network none or host
	l       limits
	extra   int
	options string // bubblewrap's, NUL-separated
}

// preparedTurn is a workspace's prepared process.
type preparedTurn struct {
	ws    string
	shape preparedShape
	g     turnCgroup
	c     *child
	// bound are the files and directories bound into the sandbox as they were before
	// it was made.
	bound string
	// The hub's ends of the pipes at fd 4 on: extra descriptors, bubblewrap's options,
	// the turn's command.
	extraW      []*os.File
	argsW, ctlW *os.File
	// ready is closed once made (c set) or not (err set).
	ready chan struct{}
	err   error
	// after is closed once every earlier prepared process of the workspace has ended
	// and its group is removed: the groups share a name.
	after <-chan struct{}
	// Under the preparer's lock: ended is set when the process is to be ended (a
	// preparation not yet made then makes nothing); timer ends it when idle.
	ended bool
	timer *time.Timer
	made  time.Time
}

// preparer keeps workspaces' prepared processes.
type preparer struct {
	max    int
	idle   time.Duration
	create func(name string, l limits) (turnCgroup, error)
	name   func(workspaceID string) string
	bwrap  string

	// taken counts the turns run in a prepared process.
	taken atomic.Int64

	mu     sync.Mutex
	boxes  map[string]*preparedTurn
	ending map[string]chan struct{} // by workspace: closed when its last ending is done
	closed bool
}

// prepareTurns sets h up to prepare turns when they run in bubblewrap with limits, and
// removes the empty groups an earlier run of this hub (its scope) left prepared: its
// prepared processes ended with it.
func (h *Host) prepareTurns(cfg Config) {
	if h.bwrap == nil || h.cgroups == nil {
		return
	}
	name := func(ws string) string { return turnName(h.scope, ws) }
	h.prepared = newPreparer(cfg, h.bwrap.program, h.cgroups.create, name)
	if h.prepared == nil {
		return
	}
	for _, dir := range h.cgroups.dirs(name(preparedSweep)) {
		parent, own := filepath.Dir(dir), filepath.Base(dir)
		prefix := strings.TrimSuffix(own, SafeName(preparedSweep))
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), "-next") {
				_ = syscall.Rmdir(filepath.Join(parent, e.Name())) // a group still in use stays (EBUSY)
			}
		}
	}
}

// preparedSweep is a workspace name that only finds where the scope's groups are.
const preparedSweep = "ws_sweep"

func newPreparer(cfg Config, bwrap string, create func(string, limits) (turnCgroup, error), name func(string) string) *preparer {
	max := cfg.KeptNetworks
	if max == 0 {
		max = DefaultKeptNetworks
	}
	if max < 0 {
		return nil
	}
	idle := cfg.KeepIdle
	if idle <= 0 {
		idle = DefaultKeepIdle
	}
	return &preparer{max: max, idle: idle, create: create, name: name, bwrap: bwrap,
		boxes: map[string]*preparedTurn{}, ending: map[string]chan struct{}{}}
}

// shapeOf is the shape inv (kept, wrapped, not yet joined) would be prepared as, and
// whether it can be at all: a bubblewrap sandbox, in a kept pair or with no network of
// its own to make, every environment name one the shell can export.
func (p *preparer) shapeOf(inv Process, l limits) (preparedShape, bool) {
	if p == nil || inv.sandboxArgs == nil || inv.netns != nil || inv.Argv0 != "" || inv.Path != p.bwrap || inv.Dir != "/" ||
		len(inv.Args) < 4 || inv.Args[0] != "--args" || inv.Args[1] != inv.argsFD() || inv.Args[2] != "--" {
		return preparedShape{}, false
	}
	for _, kv := range inv.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !shellName.MatchString(name) {
			return preparedShape{}, false
		}
	}
	return preparedShape{kept: inv.kept, l: l, extra: len(inv.Extra), options: strings.Join(inv.sandboxArgs, "\x00")}, true
}

// boundNow identifies what bubblewrap's options bind (each source's device and inode,
// or its absence), as it is now.
func boundNow(options string) string {
	var b strings.Builder
	args := strings.Split(options, "\x00")
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--bind", "--ro-bind", "--ro-bind-try", "--bind-try":
			i++
			var st syscall.Stat_t
			if err := syscall.Stat(args[i], &st); err != nil {
				fmt.Fprintf(&b, "%s:-\n", args[i])
			} else {
				fmt.Fprintf(&b, "%s:%d:%d\n", args[i], st.Dev, st.Ino)
			}
		}
	}
	return b.String()
}

// take returns the workspace's prepared process when it fits s (and ok), now the
// caller's; nil otherwise, a prepared process that does not fit being ended.
func (p *preparer) take(ws string, s preparedShape, ok bool) *preparedTurn {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	b := p.boxes[ws]
	if b != nil {
		delete(p.boxes, ws)
		b.timer.Stop()
	}
	p.mu.Unlock()
	if b == nil {
		return nil
	}
	<-b.ready
	if ok && b.err == nil && b.shape == s && !b.c.exited() && (s.kept == nil || s.kept.alive()) && boundNow(s.options) == b.bound {
		p.taken.Add(1)
		return b
	}
	p.mu.Lock()
	end := p.endLocked(b)
	p.mu.Unlock()
	go end()
	return nil
}

// prepare starts the workspace's next turn's process of shape s, in the background.
func (p *preparer) prepare(ws string, s preparedShape) {
	if p == nil {
		return
	}
	b := &preparedTurn{ws: ws, shape: s, ready: make(chan struct{})}
	var ends []func()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	if old := p.boxes[ws]; old != nil { // not possible: the turn before took it
		ends = append(ends, p.endLocked(old))
	}
	for len(p.boxes) >= p.max {
		ends = append(ends, p.endLocked(p.oldest()))
	}
	b.after, b.made = p.ending[ws], time.Now()
	p.boxes[ws] = b
	b.timer = time.AfterFunc(p.idle, func() {
		p.mu.Lock()
		var end func()
		if p.boxes[ws] == b {
			end = p.endLocked(b)
		}
		p.mu.Unlock()
		if end != nil {
			end()
		}
	})
	p.mu.Unlock()
	go func() {
		for _, end := range ends {
			end()
		}
		p.make(b)
	}()
}

// oldest is the prepared process made first (p.mu held, p.boxes not empty).
func (p *preparer) oldest() *preparedTurn {
	var o *preparedTurn
	for _, b := range p.boxes {
		if o == nil || b.made.Before(o.made) {
			o = b
		}
	}
	return o
}

// endLocked takes b out of what is kept (p.mu held) and returns what ends it: after
// the workspace's earlier endings, so the group name they share is removed in order.
func (p *preparer) endLocked(b *preparedTurn) func() {
	if p.boxes[b.ws] == b {
		delete(p.boxes, b.ws)
	}
	b.timer.Stop()
	b.ended = true
	return p.inTurnLocked(b.ws, func() {
		<-b.ready
		b.end()
	})
}

// inTurnLocked returns what runs end once the workspace's earlier endings and removals
// are done, and which its next prepared sandbox waits for (p.mu held): the groups they
// touch share a name.
func (p *preparer) inTurnLocked(ws string, end func()) func() {
	prev, done := p.ending[ws], make(chan struct{})
	p.ending[ws] = done
	return func() {
		if prev != nil {
			<-prev
		}
		end()
		close(done)
		p.mu.Lock()
		if p.ending[ws] == done {
			delete(p.ending, ws)
		}
		p.mu.Unlock()
	}
}

// removeLater removes the group of a turn run in a prepared sandbox, in the background:
// the sandbox's processes are gone with its first (its PID namespace ended them), so
// what is left is the kernel's bookkeeping, and the turn's answer need not wait for
// it. The workspace's next prepared group, of the same name, waits for it.
func (p *preparer) removeLater(ws string, g turnCgroup) {
	p.mu.Lock()
	remove := p.inTurnLocked(ws, func() { _ = g.remove() })
	p.mu.Unlock()
	go remove()
}

// make makes b's group and starts its process, unless b was ended meanwhile.
func (p *preparer) make(b *preparedTurn) {
	defer close(b.ready)
	if b.after != nil {
		<-b.after
	}
	p.mu.Lock()
	ended := b.ended
	p.mu.Unlock()
	if ended {
		b.err = errPreparedEnded
		return
	}
	if b.g, b.err = p.create(p.name(b.ws)+"-next", b.shape.l); b.err != nil {
		return
	}
	if b.err = b.start(p.bwrap); b.err != nil {
		_ = b.g.remove()
		b.g = nil
	}
}

var errPreparedEnded = errors.New("the prepared sandbox was ended before it was made")

// start makes b's sandbox: descriptors 4.. of its first process are the extra pipes'
// read ends, then bubblewrap's options', then the command's.
func (b *preparedTurn) start(bwrap string) error {
	var files []*os.File // the child's ends, closed once it has them
	defer func() { closeAll(files...) }()
	pipe := func() (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		files = append(files, r)
		return w, nil
	}
	fail := func(err error) error {
		closeAll(b.extraW...)
		closeAll(b.argsW, b.ctlW)
		return err
	}
	for range b.shape.extra {
		w, err := pipe()
		if err != nil {
			return fail(err)
		}
		b.extraW = append(b.extraW, w)
	}
	var err error
	if b.argsW, err = pipe(); err != nil {
		return fail(err)
	}
	if b.ctlW, err = pipe(); err != nil {
		return fail(err)
	}
	argsFD, ctlFD := 4+b.shape.extra, 5+b.shape.extra
	inner := []string{"/bin/sh", "-c", innerScript, preparedName, "/proc/self/fd/" + strconv.Itoa(ctlFD)}
	args := append(append([]string{"-c", joinScript, cgroupHelper}, b.g.procs()...), "--", bwrap, "--args", strconv.Itoa(argsFD), "--")
	args = append(args, inner...)
	path := "/bin/sh"
	if b.shape.kept != nil {
		path, args = b.shape.kept.enter(path, args)
	}
	sys := procgroup.Attr()
	// A prepared sandbox never outlives the hub (nor would it: its command's pipe
	// closes with the hub, and the shell waiting on it exits).
	sys.Pdeathsig = syscall.SIGKILL
	b.bound = boundNow(b.shape.options)
	argv0 := cgroupHelper // the joining shell's name, as a one-off turn's (nsenter keeps its own)
	if b.shape.kept != nil {
		argv0 = ""
	}
	// Started in /, with nothing in its environment but what the turn exports.
	if b.c, err = startChild(path, argv0, args, "/", []string{}, sys, files); err != nil {
		return fail(err)
	}
	options := b.shape.options + "\x00"
	go func() { _, _ = io.WriteString(b.argsW, options); _ = b.argsW.Close() }()
	return nil
}

// end ends b's process, if it was made, and removes its group.
func (b *preparedTurn) end() {
	if b.c != nil {
		closeAll(b.extraW...)
		closeAll(b.argsW, b.ctlW)
		b.c.kill()
	}
	if b.g != nil {
		_ = b.g.remove()
	}
}

// run runs inv (kept and wrapped as shapeOf took it) as the turn in b: the command
// and options are handed over, the extra descriptors copied, and the process watched
// as a one-off turn's (run). b's group is the caller's to read and remove.
func (b *preparedTurn) run(ctx context.Context, inv Process) Exit {
	if inv.Grace <= 0 {
		inv.Grace = DefaultGrace
	}
	defer closeAll(inv.Extra...) // on every path; the copies end with them
	if err := ctx.Err(); err != nil {
		closeAll(b.extraW...)
		closeAll(b.argsW, b.ctlW)
		b.c.kill()
		return Exit{Code: -1, Interrupted: true}
	}
	b.feed(inv)
	return b.c.watch(ctx, inv, inv.kept.servedBy())
}

// commandScript is what the shell waiting in the prepared sandbox sources: inv's
// environment exported, then inv's program (after bubblewrap's "--args N --") exec'd,
// the command's own descriptor closed.
func commandScript(inv Process, ctlFD int) string {
	var s strings.Builder
	for _, kv := range inv.Env {
		name, value, _ := strings.Cut(kv, "=")
		s.WriteString("export " + name + "=" + shellword.Quote(value) + "\n")
	}
	s.WriteString("exec")
	for _, a := range inv.Args[3:] {
		s.WriteString(" " + shellword.Quote(a))
	}
	s.WriteString(" " + strconv.Itoa(ctlFD) + "<&-\n")
	return s.String()
}

// feed hands the turn's command to b's sandbox and copies the turn's extra descriptors
// into its pipes; each pipe is closed once written.
func (b *preparedTurn) feed(inv Process) {
	script := commandScript(inv, 5+b.shape.extra)
	go func() { _, _ = io.WriteString(b.ctlW, script); _ = b.ctlW.Close() }()
	for i, src := range inv.Extra {
		dst := b.extraW[i]
		// Ends when the turn's end closes src (run's closeAll).
		go func() { _, _ = io.Copy(dst, src); _ = dst.Close() }()
	}
}

// close ends every prepared process, and prepares none from then on.
func (p *preparer) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	var ends []func()
	for _, b := range p.boxes {
		ends = append(ends, p.endLocked(b))
	}
	p.mu.Unlock()
	for _, end := range ends {
		end()
	}
}
