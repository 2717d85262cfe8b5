package scripts_test

import (
	"database/sql"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/lib/pq"
)

// Two clones on one machine each get a cluster of their own: pg.sh chooses a free
// port when it makes a cluster and keeps it, so the second does not fail on the
// first's port (it used to take 55432 for everyone).
func TestTwoClustersOnOneMachineGetTwoPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("makes two PostgreSQL clusters")
	}
	t.Parallel()
	// Under a directory the server's user can reach (pg.sh runs it as postgres when
	// the tests run as root).
	root, err := os.MkdirTemp("", "wshub-pg-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	pg := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{"pg.sh"}, args...)...)
		cmd.Env = append(filterEnv(os.Environ(), "DATABASE_URL", "WSHUB_PG_PORT"), "WSHUB_PG_DIR="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pg.sh %v: %v\n%s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	var ports []string
	for _, name := range []string{"one", "two"} {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		u := pg(dir)
		t.Cleanup(func() { pg(dir, "stop") })
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := os.ReadFile(filepath.Join(dir, "port"))
		if err != nil || strings.TrimSpace(string(kept)) != parsed.Port() {
			t.Fatalf("expected the chosen port %s kept in %s/port, got %q %v", parsed.Port(), dir, kept, err)
		}
		db, err := sql.Open("postgres", u)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(); err != nil {
			t.Fatalf("cluster %s at %s: %v", name, parsed.Host, err)
		}
		db.Close()
		ports = append(ports, parsed.Port())
		// Started again, a cluster keeps its port.
		if again := pg(dir); again != u {
			t.Fatalf("expected the same URL again, got %s then %s", u, again)
		}
	}
	if ports[0] == ports[1] {
		t.Fatalf("expected two ports, got %v", ports)
	}
}

func filterEnv(env []string, drop ...string) []string {
	var out []string
	for _, kv := range env {
		keep := true
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
