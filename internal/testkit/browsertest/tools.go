package browsertest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/repofile"
)

// Environment variables that name the tools, overriding where the scripts put them.
const (
	// EnvChromium names a Chromium (or Chrome) binary; else chromium on PATH.
	EnvChromium = "WSHUB_CHROMIUM"
	// EnvAxe names an axe.min.js; else scripts/axe.sh's cache entry.
	EnvAxe = "WSHUB_AXE"
	// EnvAxeCache is scripts/axe.sh's cache directory, when not the default.
	EnvAxeCache = "WSHUB_AXE_CACHE"
)

// chromium is the browser's path; the test is skipped when there is none.
func chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("browsertest: %s=%s: %v", EnvChromium, p, err)
		}
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skipf("browsertest: chromium is not installed: run scripts/chromium.sh (make test does; as root it installs Debian's chromium), or set %s", EnvChromium)
	}
	return p
}

// axeSource is axe.min.js's text. It is read at each use, not kept: a test may
// point WSHUB_AXE elsewhere, and the file is small next to a page load.
func axeSource() (string, error) {
	path, err := axePath()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", &notInstalled{fmt.Sprintf("axe-core is not installed at %s: run scripts/axe.sh (make test does) to fetch it from npm", path)}
	}
	return string(b), err
}

// notInstalled is a tool that is not there: the test skips, saying why, rather than
// fails.
type notInstalled struct{ why string }

func (e *notInstalled) Error() string { return e.why }

// axePath is $WSHUB_AXE, else the cache entry of the version scripts/axe.sh pins:
// $WSHUB_AXE_CACHE, or ${XDG_CACHE_HOME:-~/.cache}/wshub/axe, then
// axe-core@<version>/node_modules/axe-core/axe.min.js.
func axePath() (string, error) {
	if p := os.Getenv(EnvAxe); p != "" {
		return p, nil
	}
	version, err := axeVersion()
	if err != nil {
		return "", err
	}
	cache := os.Getenv(EnvAxeCache)
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", &notInstalled{fmt.Sprintf("no cache directory for axe-core (%v): set %s", err, EnvAxe)}
		}
		cache = filepath.Join(dir, "wshub", "axe")
	}
	return filepath.Join(cache, "axe-core@"+version, "node_modules", "axe-core", "axe.min.js"), nil
}

// axeVersion reads the AXE_VERSION= line of scripts/axe.sh, found by walking up from
// the package directory (where go test runs) to the module's root: the version is
// pinned there and nowhere else.
func axeVersion() (string, error) {
	script, err := repofile.Path("scripts/axe.sh")
	if err != nil {
		return "", fmt.Errorf("%w: set %s", err, EnvAxe)
	}
	f, err := os.Open(script)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AXE_VERSION="); ok && v != "" {
			return v, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("scripts/axe.sh has no AXE_VERSION= line")
}
