package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// hostLayout is a hub data directory as the local provider lays it out: this
// workspace, another workspace with a secret in its checkout, mirrors, blobs.
type hostLayout struct {
	data, checkout, home, otherSecret string
}

func newHostLayout(t testing.TB) hostLayout {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	l := layoutAt(data)
	for _, d := range []string{l.checkout, filepath.Dir(l.otherSecret), filepath.Join(data, "mirrors", "prj_x"), filepath.Join(data, "assets")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, l.otherSecret, "another team's code")
	write(t, filepath.Join(data, "assets", "blob"), "sealed bytes")
	write(t, filepath.Join(l.checkout, "README.md"), "# mine\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "agent"}, {"config", "user.email", "agent@example.com"}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", l.checkout}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return l
}

// layoutAt is the layout of the data directory data (made by newHostLayout).
func layoutAt(data string) hostLayout {
	return hostLayout{
		data:        data,
		checkout:    filepath.Join(data, "workspaces", "ws_mine", "checkout"),
		home:        filepath.Join(data, "workspaces", "ws_mine", "home"),
		otherSecret: filepath.Join(data, "workspaces", "ws_theirs", "checkout", "secret.txt"),
	}
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (l hostLayout) turn(network, prompt string) core.TurnRequest {
	return core.TurnRequest{WorkspaceID: "ws_mine", TurnID: "turn_1", Agent: "agent_1", Model: "m",
		RuntimeMode: "full-access", Branch: "main", Dir: l.checkout, Home: l.home, Network: network, Prompt: prompt}
}

// script writes an agent program outside the data directory and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(p, []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// probe runs one shell check per line in the sandbox: each prints "name=yes" when the
// agent managed the thing, "name=no" otherwise.
func probeLines(checks map[string]string) string {
	var b strings.Builder
	for name, cmd := range checks {
		fmt.Fprintf(&b, "if ( %s ) >/dev/null 2>&1; then echo %s=yes; else echo %s=no; fi\n", cmd, name, name)
	}
	return b.String()
}

func results(t *testing.T, res turnResult) map[string]string {
	t.Helper()
	if !res.completed() {
		t.Fatalf("expected the probing turn to complete, got %+v", res)
	}
	out := map[string]string{}
	for line := range strings.Lines(res.Reply) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			out[k] = v
		}
	}
	return out
}

func TestSandboxConfinesAMaliciousAgent(t *testing.T) {
	l := newHostLayout(t)
	const marker = "hub-secret-4b1d"
	t.Setenv("DATABASE_URL", "postgres://wshub:"+marker+"@127.0.0.1/wshub")
	t.Setenv("WSHUB_CONTENT_KEY", marker)
	t.Setenv("PGPASSWORD", marker)
	hub := os.Getpid()
	exe, _ := os.Executable()
	checks := map[string]string{
		"read_other_checkout": "cat " + shQuote(l.otherSecret),
		"list_data_dir":       "ls " + shQuote(l.data),
		"read_blob":           "cat " + shQuote(filepath.Join(l.data, "assets", "blob")),
		"list_mirrors":        "ls " + shQuote(filepath.Join(l.data, "mirrors")),
		"read_hub_environ":    fmt.Sprintf("cat /proc/%d/environ", hub),
		"see_hub_process":     fmt.Sprintf("test -e /proc/%d", hub),
		"see_hub_by_name":     "grep -qs -- " + shQuote(filepath.Base(exe)) + " /proc/[0-9]*/comm",
		"secret_in_proc":      "grep -qs " + marker + " /proc/[0-9]*/environ",
		"read_hub_binary":     "cat " + shQuote(exe),
		"write_usr":           "touch /usr/pwned",
		"write_etc":           "touch /etc/pwned",
		"write_root":          "touch /pwned",
		"write_data_dir":      "touch " + shQuote(filepath.Join(l.data, "pwned")),
		"read_checkout":       "grep -q mine README.md",
		"write_checkout":      "echo new > written-by-agent.txt",
		"git_works":           "echo g > by-git.txt && git add -A && git commit -q -m turn && git log --oneline | grep -q turn",
		"home_is_private":     `test "$HOME" = /home/agent && touch "$HOME/.kept"`,
	}
	r := sandboxed(t, l, script(t, "cat >/dev/null\n"+probeLines(checks)))
	got := results(t, r.RunTurn(context.Background(), l.turn(core.NetworkFull, "probe")))
	for name := range checks {
		want := "no"
		switch name {
		case "read_checkout", "write_checkout", "git_works", "home_is_private":
			want = "yes"
		}
		if got[name] != want {
			t.Errorf("%s: expected %s, got %q", name, want, got[name])
		}
	}
	if b, err := os.ReadFile(filepath.Join(l.checkout, "written-by-agent.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("expected the agent's file in the checkout on the host, got %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(l.home, ".kept")); err != nil {
		t.Errorf("expected the agent's home file on the host in the workspace home: %v", err)
	}
	if _, err := os.Stat(filepath.Join(l.data, "pwned")); err == nil {
		t.Errorf("the agent wrote into the data directory")
	}
}

func TestSandboxHomeIsKeptAcrossTurns(t *testing.T) {
	l := newHostLayout(t)
	r := sandboxed(t, l, script(t, `read -r prompt
case "$prompt" in
remember) echo by-the-first-turn > "$HOME/.agent-session"; echo kept ;;
recall) cat "$HOME/.agent-session" ;;
esac`))
	first := l.turn(core.NetworkFull, "remember")
	if res := r.RunTurn(context.Background(), first); res.Reply != "kept" {
		t.Fatalf("expected the first turn to keep a file in its home, got %+v", res)
	}
	second := l.turn(core.NetworkFull, "recall")
	second.TurnID = "turn_2"
	if res := r.RunTurn(context.Background(), second); res.Reply != "by-the-first-turn" {
		t.Fatalf("expected the second turn to read the first turn's home file, got %+v", res)
	}
}

func TestSandboxReachesTheHostsLoopbackOnlyWithNetworkHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := map[string]string{"connect": fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)}
	// Only "host" shares the host's network namespace, and so its loopback.
	for _, tt := range []struct{ network, want string }{{core.NetworkFull, "no"}, {core.NetworkNone, "no"}, {core.NetworkHost, "yes"}} {
		t.Run(tt.network, func(t *testing.T) {
			l := newHostLayout(t)
			r := sandboxed(t, l, script(t, "cat >/dev/null\n"+probeLines(connect)))
			got := results(t, r.RunTurn(context.Background(), l.turn(tt.network, "probe")))
			if got["connect"] != tt.want {
				t.Errorf("network %s: expected connecting to the test's loopback listener: %s, got %q", tt.network, tt.want, got["connect"])
			}
		})
	}
}

// A gateway on the hub's host (an LLM proxy on 127.0.0.1:4000) named in
// WSHUB_AGENT_EGRESS_ALLOW is reached by a "full" sandbox at the same address, and no
// other port of the host's loopback is.
func TestSandboxFullNetworkReachesAnAllowedPortOfTheHostsLoopbackOnly(t *testing.T) {
	allowed, other := serve(t, "127.0.0.1"), serve(t, "127.0.0.1")
	checks := map[string]string{"allowed": reach(allowed), "other": reach(other)}
	l := newHostLayout(t)
	r := newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"),
		Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}, EgressAllow: []string{allowed}}}, script(t, "cat >/dev/null\n"+probeLines(checks)))
	got := results(t, r.RunTurn(context.Background(), l.turn(core.NetworkFull, "probe")))
	for name, want := range map[string]string{"allowed": "yes", "other": "no"} {
		if got[name] != want {
			t.Errorf("%s port of the host's loopback: expected reached: %s, got %q", name, want, got[name])
		}
	}
}

func TestSandboxNothingOutlivesTheTurn(t *testing.T) {
	// A child that leaves the process group (setsid) and would write into the checkout
	// after the turn: the PID namespace ends it with the turn's first process.
	l := newHostLayout(t)
	const stray = "sleep 1; echo late > late.txt"
	r := sandboxed(t, l, script(t, `cat >/dev/null
setsid sh -c '`+stray+`' >/dev/null 2>&1 < /dev/null &
echo started`))
	if res := r.RunTurn(context.Background(), l.turn(core.NetworkFull, "go")); res.Reply != "started" {
		t.Fatalf("expected the turn to complete, got %+v", res)
	}
	// Ended with the turn, the stray is gone at once; one that outlived it would be
	// gone only after it wrote.
	eventually.Eventually(t, 10*time.Second, "the turn's stray process gone", func() bool {
		for pid, argv := range processArgs() {
			if slices.Equal(argv, []string{"sh", "-c", stray}) && !processGone(pid) {
				return false
			}
		}
		return true
	})
	if _, err := os.Stat(filepath.Join(l.checkout, "late.txt")); err == nil {
		t.Fatalf("a process of the finished turn wrote late.txt into the checkout after the turn ended")
	}
}

func TestStraysOfACrashedTurnAreEndedBeforeTheNext(t *testing.T) {
	// What a hub killed mid-turn leaves behind, without the sandbox to end it: a process
	// group still writing into the checkout. The record the dead hub kept names it.
	l := newHostLayout(t)
	r := newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"), Sandbox: Config{Mode: ModeNone}}, "cat >/dev/null; echo next")
	stray := exec.Command("sh", "-c", "while :; do date +%s%N >> stray.log; sleep 0.05; done")
	stray.Dir = l.checkout
	stray.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- stray.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-stray.Process.Pid, syscall.SIGKILL) })
	r.recordTurn("ws_mine", stray.Process.Pid)

	if res := r.RunTurn(context.Background(), l.turn(core.NetworkFull, "go")); res.Reply != "next" {
		t.Fatalf("expected the next turn to run, got %+v", res)
	}
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("expected the stray process killed, it ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the crashed turn's process was still running after the next turn")
	}
	if _, err := os.Stat(r.pidFile("ws_mine")); !os.IsNotExist(err) {
		t.Errorf("expected the turn record removed after the turn, got %v", err)
	}
}

func TestSandboxRefusesToShowTheDataDirectory(t *testing.T) {
	l := newHostLayout(t)
	_, err := newHost(t, Options{StateDir: filepath.Join(l.data, "run"),
		Sandbox: Config{ReadOnly: []string{filepath.Dir(l.data)}, Hidden: []string{l.data}}})
	if err == nil || !strings.Contains(err.Error(), "data directory") {
		t.Fatalf("expected WSHUB_SANDBOX_READONLY over the data directory refused, got %v", err)
	}
}

func TestSandboxMissingProgramIsRefusedSayingHowToInstallIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bwrap", Config{Program: "bwrap-not-installed"}, "apt-get install bubblewrap"},
		{"pasta", Config{Pasta: "pasta-not-installed"}, "apt-get install passt"},
	} {
		_, err := New(context.Background(), Options{StateDir: t.TempDir(), Sandbox: tt.cfg})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("expected a missing %s refused saying %q, got %v", tt.name, tt.want, err)
		}
	}
}

func TestSandboxMasksADataDirectoryUnderASystemPath(t *testing.T) {
	// A data directory under /opt (or /usr) would be visible through the system binds:
	// an empty tmpfs is mounted over it, after the bind it would show through.
	if _, err := os.Stat("/opt"); err != nil {
		t.Skip("no /opt on this machine")
	}
	b := &bwrap{program: "bwrap", hidden: []string{"/opt/wshub/data"}}
	args := strings.Join(b.args(Mounts{Checkout: "/opt/wshub/data/workspaces/ws/checkout", Home: "/opt/wshub/data/workspaces/ws/home"}), " ")
	bind, mask := strings.Index(args, "--ro-bind /opt /opt"), strings.Index(args, "--tmpfs /opt/wshub/data")
	work := strings.Index(args, "--bind /opt/wshub/data/workspaces/ws/checkout /workspace")
	if bind < 0 || mask < bind || work < mask {
		t.Fatalf("expected /opt bound, then the data directory masked, then the checkout bound, got:\n%s", args)
	}
}

// A "full" turn runs in the network helper's namespaces, with the hub's pasta beside
// the sandbox: interrupted, SIGTERM alone ends it (the grace before SIGKILL is longer
// than the test waits), and nothing of it (bwrap, pasta) is left.
func TestSandboxFullNetworkTurnIsInterruptedWithNothingLeft(t *testing.T) {
	l := newHostLayout(t)
	r := sandboxed(t, l, script(t, "cat >/dev/null; echo working; touch ready; exec sleep 600"))
	r.grace = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan turnResult, 1)
	go func() { done <- r.RunTurn(ctx, l.turn(core.NetworkFull, "go")) }()
	waitForFile(t, filepath.Join(l.checkout, "ready"))
	running := turnProcesses(t, r.Host)
	cancel()
	select {
	case res := <-done:
		if !res.Interrupted {
			t.Errorf("expected the turn interrupted, got %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunTurn did not return within 10s of the cancel")
	}
	// The workspace's namespace and its pasta are kept for its next turn (netkeep.go):
	// the turn's own processes are what goes.
	waitUntil(t, "the helper and bwrap gone with the turn", func() bool { return len(groupMembers(running.pgid, running.start)) == 0 }, &strings.Builder{})
	if n, _, pasta := r.kept("ws_mine"); n == nil || !slices.Equal(running.pasta, []int{pasta}) || processGone(pasta) {
		t.Errorf("expected the turn's pasta %v kept for the next turn, got the pair %v with pasta %d", running.pasta, n, pasta)
	}
	r.Close()
	waitUntil(t, "the kept namespace's pasta gone with the host", running.gone, &strings.Builder{})
}

// turnGroup is what runs a turn: its process group (the helper, bwrap) and pasta.
type turnGroup struct {
	pgid  int
	start uint64
	pasta []int
}

// turnProcesses reads the running turn's record and finds the pasta attached to its
// sandbox.
func turnProcesses(t *testing.T, h *Host) turnGroup {
	t.Helper()
	b, err := os.ReadFile(h.pidFile("ws_mine"))
	if err != nil {
		t.Fatalf("expected the running turn recorded: %v", err)
	}
	var g turnGroup
	if n, _ := fmt.Sscanf(string(b), "%d %d", &g.pgid, &g.start); n != 2 {
		t.Fatalf("unreadable turn record %q", b)
	}
	members := map[string]bool{}
	for _, pid := range groupMembers(g.pgid, g.start) {
		members[strconv.Itoa(pid)] = true
	}
	// pasta's last argument is the process whose namespace it serves: the sandbox's
	// bwrap, or the holder of the workspace's kept namespace, which bwrap has entered.
	netns := func(pid string) string { ns, _ := os.Readlink("/proc/" + pid + "/ns/net"); return ns }
	sandboxNS := netns(strconv.Itoa(g.pgid))
	for pid, argv := range processArgs() {
		if target := argv[len(argv)-1]; slices.Contains(argv, "--dns-forward") && (members[target] || netns(target) == sandboxNS) {
			g.pasta = append(g.pasta, pid)
		}
	}
	if len(g.pasta) == 0 {
		t.Fatalf("expected a pasta serving the turn's sandbox (group %d)", g.pgid)
	}
	return g
}

// gone reports whether nothing of the turn runs any more.
func (g turnGroup) gone() bool {
	if len(groupMembers(g.pgid, g.start)) > 0 {
		return false
	}
	for _, pid := range g.pasta {
		if !processGone(pid) {
			return false
		}
	}
	return true
}

// processArgs are the arguments of every process that has some.
func processArgs() map[int][]string {
	out := map[int][]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && len(b) > 0 {
			out[pid] = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		}
	}
	return out
}

// fakeHub marks the copy of the test binary that plays the hub, killed mid-turn; its
// value is the data directory.
const fakeHub = "WSHUB_TEST_FAKE_HUB"

// A hub killed mid-turn takes a full-network sandbox with it, as bwrap's
// --die-with-parent does when bwrap is the hub's child: the network helper in between,
// the sandbox and pasta all end.
func TestSandboxFullNetworkDiesWithTheHub(t *testing.T) {
	if data := os.Getenv(fakeHub); data != "" {
		// Killed, this process cleans up nothing: everything it uses is the parent's.
		l := layoutAt(data)
		r := sandboxed(t, l, os.Getenv("WSHUB_TEST_AGENT_SCRIPT"))
		r.RunTurn(context.Background(), l.turn(core.NetworkFull, "wait")) // until killed
		return
	}
	l := newHostLayout(t)
	marker := fmt.Sprintf("wshub-test-agent-%d", time.Now().UnixNano())
	agent := script(t, "cat >/dev/null; exec -a "+marker+" sleep 600")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hub := exec.Command(self, "-test.run=^"+t.Name()+"$", "-test.count=1")
	hub.Env = append(os.Environ(), fakeHub+"="+l.data, "WSHUB_TEST_AGENT_SCRIPT="+agent)
	var out strings.Builder
	hub.Stdout, hub.Stderr = &out, &out
	if err := hub.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Process.Kill(); _ = hub.Wait() })

	waitUntil(t, "the turn running: recorded, its agent started", func() bool {
		_, err := os.Stat(filepath.Join(l.data, "run", "ws_mine.pid"))
		return err == nil && len(processesNamed(marker)) > 0
	}, &out)
	running := turnProcesses(t, &Host{stateDir: filepath.Join(l.data, "run")})
	if err := hub.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = hub.Wait()
	waitUntil(t, "the agent, the helper, bwrap and pasta gone with the hub", func() bool {
		return len(processesNamed(marker)) == 0 && running.gone()
	}, &out)
}

// waitUntil waits for cond, failing with what, and out, after 20 s.
func waitUntil(t *testing.T, what string, cond func() bool, out fmt.Stringer) {
	t.Helper()
	if !eventually.Within(20*time.Second, cond) {
		t.Fatalf("expected %s within 20 s; the hub said:\n%s", what, out)
	}
}

// processesNamed lists the live processes whose argv[0] is name.
func processesNamed(name string) []int {
	var out []int
	for pid, argv := range processArgs() {
		if argv[0] == name && !processGone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// The sandbox's memory-backed filesystems have caps: a turn cannot fill the host's
// RAM through /tmp or /dev/shm, and the rest of /dev takes no files at all.
func TestSandboxCapsItsMemoryFilesystems(t *testing.T) {
	l := newHostLayout(t)
	checks := map[string]string{
		// Each cleans up after itself: the checks run in any order.
		"tmp_under_cap":  "head -c 1000000 /dev/zero > /tmp/a; s=$?; rm -f /tmp/a; exit $s",
		"tmp_over_cap":   "head -c 3000000 /dev/zero > /tmp/b; s=$?; rm -f /tmp/b; exit $s",
		"shm_under_cap":  "head -c 500000 /dev/zero > /dev/shm/a; s=$?; rm -f /dev/shm/a; exit $s",
		"shm_over_cap":   "head -c 2000000 /dev/zero > /dev/shm/b; s=$?; rm -f /dev/shm/b; exit $s",
		"dev_takes_file": "head -c 1000 /dev/zero > /dev/x",
		"dev_null_works": "echo x > /dev/null",
	}
	r := newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"),
		Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}, TmpBytes: 2 << 20, ShmBytes: 1 << 20}}, script(t, "cat >/dev/null\n"+probeLines(checks)))
	got := results(t, r.RunTurn(context.Background(), l.turn(core.NetworkNone, "probe")))
	for name, want := range map[string]string{"tmp_under_cap": "yes", "tmp_over_cap": "no", "shm_under_cap": "yes",
		"shm_over_cap": "no", "dev_takes_file": "no", "dev_null_works": "yes"} {
		if got[name] != want {
			t.Errorf("%s: expected %s, got %q", name, want, got[name])
		}
	}
}

// pasta is the hub's child beside the sandbox: when it ends first, the sandbox has no
// network any more, so the turn is ended and says why, with what pasta said.
func TestSandboxTurnEndsSayingWhyWhenPastaEndsFirst(t *testing.T) {
	real, err := exec.LookPath("pasta")
	if err != nil {
		t.Skip("pasta is not installed (Debian: apt-get install passt; make test installs it)")
	}
	l := newHostLayout(t)
	broken := filepath.Join(t.TempDir(), "broken")
	// The real pasta for the start-up probe; once broken exists, one that fails.
	pasta := script(t, fmt.Sprintf(`if [ -e %q ]; then echo "cannot open /dev/net/tun: gone" >&2; exit 1; fi; exec %q "$@"`, broken, real))
	r := newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"),
		Sandbox: Config{Mode: ModeBwrap, Pasta: pasta, Hidden: []string{l.data}}}, script(t, "cat >/dev/null; echo started"))
	write(t, broken, "")
	res := r.RunTurn(context.Background(), l.turn(core.NetworkFull, "go"))
	if res.StartErr != nil || res.Code == 0 {
		t.Fatalf("expected the turn's process to end in failure, got %+v", res)
	}
	for _, want := range []string{"pasta ended before the sandbox", "cannot open /dev/net/tun: gone"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("expected the turn's standard error to say %q, got %q", want, res.Stderr)
		}
	}
}

// The host's configuration and the hub's command line stay out of the sandbox: /etc
// files that often hold credentials (a registry token in /etc/npmrc, a credential
// helper in /etc/gitconfig) are not there, and no process the agent can see (pid 1,
// bubblewrap's own, among them) shows the data directory or the hub's PATH in its
// command line or environment.
func TestSandboxShowsNeitherHostConfigurationNorTheHubsCommandLine(t *testing.T) {
	for _, f := range []string{"/etc/npmrc", "/etc/gitconfig"} {
		ensureHostFile(t, f)
	}
	hubOnly := filepath.Join(t.TempDir(), "hub-only-bin")
	t.Setenv("PATH", os.Getenv("PATH")+":"+hubOnly)
	l := newHostLayout(t)
	checks := map[string]string{
		"npmrc":              "test -e /etc/npmrc",
		"gitconfig":          "test -e /etc/gitconfig",
		"data_dir_in_proc":   inProc(l.data),
		"hub_path_in_proc":   inProc(hubOnly),
		"hub_path_in_env":    "env | grep -qF -- " + shQuote(hubOnly),
		"pid_1_is_visible":   "test -r /proc/1/cmdline",
		"resolver_works":     "test -r /etc/resolv.conf && test -r /etc/passwd",
		"system_path_in_env": `case ":$PATH:" in *:/usr/bin:*) ;; *) exit 1;; esac`,
	}
	r := sandboxed(t, l, script(t, "cat >/dev/null\n"+probeLines(checks)))
	for _, network := range []string{core.NetworkNone, core.NetworkFull} {
		got := results(t, r.RunTurn(context.Background(), l.turn(network, "probe")))
		for name := range checks {
			want := "no"
			switch name {
			case "pid_1_is_visible", "resolver_works", "system_path_in_env":
				want = "yes"
			}
			if got[name] != want {
				t.Errorf("network %s, %s: expected %s, got %q", network, name, want, got[name])
			}
		}
	}
}

// ensureHostFile makes sure path exists on the host, for a test that checks the
// sandbox does not show it; one the test made is removed after it.
func ensureHostFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case os.IsExist(err):
		return
	case err != nil:
		t.Skipf("cannot make %s for the test: %v", path, err)
	}
	t.Cleanup(func() { _ = os.Remove(path) })
	if _, err := f.WriteString("# made by " + t.Name() + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// inProc is a check that finds s in a process's command line or environment in the
// sandbox. The pattern goes through a file (printf is bash's own): on grep's command
// line it would find itself.
func inProc(s string) string {
	return "printf '%s\\n' " + shQuote(s) + " >/tmp/pattern && grep -qsaFf /tmp/pattern /proc/[0-9]*/cmdline /proc/[0-9]*/environ"
}
