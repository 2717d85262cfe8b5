package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wshub/wshub/internal/balancer"
	"github.com/wshub/wshub/internal/procgroup"
)

// The soak's hubs. With one (make soak), a `wshub serve` whose workspaces are local,
// as before. With more (make soak HUBS=2), replicas that share nothing but the
// database: each has a data directory of its own, attachments and branches go through
// the blob store in PostgreSQL, and workspaces run on the process provider, since a
// local workspace lives on its hub's disk and no other hub could serve it. A balancer
// in front of them takes the clients' requests and the runtimes' calls.

// soakHub is one `wshub serve` of the soak, started again on the same address and data
// directory after each kill.
type soakHub struct {
	name    string // "a", "b"; "" for the single hub
	url     string // its own address, not the balancer's
	dataDir string // "" for the single hub: the run's
	env     []string
	kills   int // under soak.mu

	mu  sync.Mutex
	srv *server
}

func (h *soakHub) current() *server {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.srv
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// replicas sets up n hubs, with env as the single hub's settings, and the balancer in
// front of them.
func (s *soak) replicas(n int, env []string) error {
	prog, err := filepath.Abs(s.r.hubBin) // a runtime starts in its own directory
	if err != nil {
		return err
	}
	var urls []string
	for i := range n {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		h := &soakHub{name: string(rune('a' + i)), url: "http://" + addr}
		// Under the run's directory, so teardown removes them, but apart from it: the
		// directory the run's setup cloned the project's mirror into is no hub's.
		h.dataDir = filepath.Join(s.r.dataDir, "hub-"+h.name)
		if err := os.Mkdir(h.dataDir, 0o700); err != nil {
			return err
		}
		// A host id of its own, as two hosts have: replicas with disks of their own must
		// not share one.
		h.env = append(slices.Clone(env), "WSHUB_ADDR="+addr, "WSHUB_DATA_DIR="+h.dataDir, "WSHUB_HOST_ID=soak-"+h.name)
		s.hubs = append(s.hubs, h)
		urls = append(urls, h.url)
	}
	if s.lb, err = balancer.Start(urls...); err != nil {
		return err
	}
	for _, h := range s.hubs {
		h.env = append(h.env, "WSHUB_BLOBS=postgres", "WSHUB_PROVIDERS=process", "WSHUB_RUNTIME_PROGRAM="+prog,
			"WSHUB_RUNTIME_HUB_URL="+s.lb.URL)
	}
	s.url = s.lb.URL
	return nil
}

// stopHubs stops the hubs (SIGINT), then the runtime processes they leave running, as
// a hub that shuts down leaves its machines, then the balancer.
func (s *soak) stopHubs() {
	for _, h := range s.hubs {
		if srv := h.current(); srv != nil {
			srv.stop()
		}
	}
	for _, h := range s.hubs {
		if h.dataDir != "" {
			s.leftover += killRuntimes(filepath.Join(h.dataDir, "machines"))
		}
	}
	if s.lb != nil {
		s.lb.Close()
	}
}

func (s *soak) hubURLs() string {
	var parts []string
	for _, h := range s.hubs {
		parts = append(parts, h.name+" "+h.url)
	}
	return strings.Join(parts, ", ")
}

// killRuntimes ends the process group of every runtime still running under machines
// (a hub's <data dir>/machines), and returns how many there were. The pid files are
// the process provider's own (machines/<workspace>/runtime.pid, rewritten by each
// start); a runtime whose hub was killed before it wrote one is found by its
// environment. A process counts only when its environment names its directory, as
// the provider checks, so a recycled pid is never killed.
func killRuntimes(machines string) int {
	pids := map[int]bool{}
	files, _ := filepath.Glob(filepath.Join(machines, "*", "runtime.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 &&
			runtimeDir(pid, filepath.Dir(f)) {
			pids[pid] = true
		}
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pids[pid] {
			continue
		}
		if env, err := os.ReadFile("/proc/" + p.Name() + "/environ"); err == nil &&
			bytes.Contains(env, []byte("WSHUB_RUNTIME_DIR="+machines+string(filepath.Separator))) {
			if pgid, err := procgroup.Of(pid); err == nil && pgid == pid { // a runtime leads its group; its agents do not
				pids[pid] = true
			}
		}
	}
	for pid := range pids {
		_ = procgroup.Signal(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for pid := range pids {
		for procgroup.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		_ = procgroup.Signal(pid, syscall.SIGKILL)
	}
	return len(pids)
}

// runtimeDir reports whether process pid is the runtime of dir.
func runtimeDir(pid int, dir string) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	want := []byte("WSHUB_RUNTIME_DIR=" + dir)
	return err == nil && slices.ContainsFunc(bytes.Split(env, []byte{0}), func(e []byte) bool { return bytes.Equal(e, want) })
}
