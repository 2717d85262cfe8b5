// Package agentcli finds the real agent CLIs that scripts/agents.sh installs for tests
// (Claude Code and Codex at the versions pinned in scripts/agents.versions), so tests
// can run them against the stand-in model APIs of internal/testkit/modelapi.
package agentcli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/repofile"
)

// The pinned packages (scripts/agents.versions) and the command each installs.
const (
	ClaudePackage = "@anthropic-ai/claude-code"
	CodexPackage  = "@openai/codex"
)

var commands = map[string]string{ClaudePackage: "claude", CodexPackage: "codex"}

// Claude is the installed Claude Code CLI; the test is skipped when it is not there.
func Claude(t testing.TB) CLI {
	t.Helper()
	return find(t, ClaudePackage)
}

// Codex is the installed Codex CLI; the test is skipped when it is not there.
func Codex(t testing.TB) CLI {
	t.Helper()
	return find(t, CodexPackage)
}

// CLI is one installed agent CLI.
type CLI struct {
	// Path is the command as npm installed it (node_modules/.bin/<command>).
	Path string
	// Dir is its install directory: a sandbox must show it for Path to run.
	Dir string
	// Version is the pinned version.
	Version string
}

// CacheDir is scripts/agents.sh's cache: $WSHUB_AGENTS_CACHE, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/wshub/agents.
func CacheDir() (string, error) {
	if d := os.Getenv("WSHUB_AGENTS_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "wshub", "agents"), nil
}

func find(t testing.TB, pkg string) CLI {
	t.Helper()
	version, err := pinned(pkg)
	if err != nil {
		t.Fatalf("agentcli: %v", err)
	}
	cache, err := CacheDir()
	if err != nil {
		t.Skipf("agentcli: no cache directory for the agent CLIs (%v); run scripts/agents.sh", err)
	}
	dir := filepath.Join(cache, pkg+"@"+version)
	path := filepath.Join(dir, "node_modules", ".bin", commands[pkg])
	if _, err := os.Stat(path); err != nil {
		t.Skipf("agentcli: %s@%s is not installed at %s: run scripts/agents.sh (make test does) to install it from npm", pkg, version, path)
	}
	return CLI{Path: path, Dir: dir, Version: version}
}

// pinned reads pkg's version from scripts/agents.versions, found by walking up from
// the package directory (where go test runs) to the module's root.
func pinned(pkg string) (string, error) {
	versions, err := repofile.Path("scripts/agents.versions")
	if err != nil {
		return "", err
	}
	f, err := os.Open(versions)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == pkg {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("scripts/agents.versions pins no version of %s", pkg)
}
