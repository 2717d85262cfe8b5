package caches_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub"
)

// npmSetup installs the lockfile's packages unless the cache brought them.
const npmSetup = `set -e
if [ -f node_modules/leftpad/index.js ]; then
	echo hit > .setup-saw
else
	echo miss > .setup-saw
	npm ci --offline --no-audit --no-fund
fi
`

// A real package manager: npm ci installs a package (a tarball the repository holds,
// as a vendored or private dependency) into node_modules, which the next workspace
// gets from the cache. No registry is asked: the project has no network, npm runs
// offline, and its registry is an address nothing answers on.
func TestNpmCiInstallsOfflineIntoACachedNodeModules(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test needs %s: %v", tool, err)
		}
	}
	h := startBare(t, hub.BlobsFile, 10<<20)
	repo := h.Project.Repository
	pkg := t.TempDir()
	write(t, filepath.Join(pkg, "package.json"), `{"name": "leftpad", "version": "1.0.0", "main": "index.js"}`)
	write(t, filepath.Join(pkg, "index.js"), "module.exports = (s, n) => String(s).padStart(n);\n")
	if err := os.MkdirAll(filepath.Join(repo, "vendor"), 0o755); err != nil {
		t.Fatal(err)
	}
	npm(t, pkg, "pack", "--pack-destination", filepath.Join(repo, "vendor"))
	write(t, filepath.Join(repo, "package.json"), `{"name": "app", "version": "1.0.0", "dependencies": {"leftpad": "file:vendor/leftpad-1.0.0.tgz"}}`)
	npm(t, repo, "install", "--package-lock-only")
	write(t, filepath.Join(repo, ".gitignore"), "node_modules/\n")
	commit(t, repo, map[string]string{".wshub/environment.json": environment(t, npmSetup, []string{"node_modules"}, "package-lock.json")})

	cold := newWorkspace(t, h, "")
	cold.expect(t, "miss", "added 1 package")
	if !strings.Contains(cold.output, "cache node_modules: saved") {
		t.Fatalf("expected node_modules saved, got:\n%s", cold.output)
	}
	warm := newWorkspace(t, h, "")
	warm.expect(t, "hit", "cache node_modules: restored")
	checkout := filepath.Join(h.Config.DataDir, "workspaces", warm.id, "checkout")
	cmd := exec.Command("node", "-e", `process.stdout.write(require("leftpad")("x", 3))`)
	cmd.Dir = checkout
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "  x" {
		t.Fatalf("expected the restored package to load, got %q (%v)", out, err)
	}
	t.Logf("npm: create-to-ready cold %s, warm %s", cold.elapsed, warm.elapsed)
}

// npm runs npm in dir offline, with a cache of its own and a registry nothing
// answers on.
func npm(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("npm", append(args, "--offline", "--no-audit", "--no-fund")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(t.TempDir(), "npm-cache"),
		"npm_config_registry=http://127.0.0.1:9/", "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %v: %v: %s", args, err, out)
	}
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
