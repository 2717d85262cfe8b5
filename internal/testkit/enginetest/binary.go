package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// Built names a server a script builds from the module proxy and caches per user,
// outside the clone (scripts/s3.sh, scripts/gitea.sh): how a test finds its binary.
type Built struct {
	// Pkg is the test helper's package, for its messages ("s3test").
	Pkg string
	// Program is the binary's name, in the cache and on PATH ("versitygw").
	Program string
	// Script builds it ("scripts/s3.sh").
	Script string
	// EnvBinary names a binary that overrides the cache and PATH; EnvCache the cache
	// directory (default ~/.cache/wshub/CacheDir).
	EnvBinary, EnvCache, CacheDir string
	// Version is the release the script builds by default: its cache entry is tried
	// first.
	Version string
}

// Binary finds the program: EnvBinary (which must be executable, or the test fails),
// then the script's cache (Version first, then other versions, newest name first),
// then PATH; it skips the test, saying how to build it, when there is none.
func (b Built) Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(b.EnvBinary); p != "" {
		if !Executable(p) {
			t.Fatalf("%s: %s=%s is not an executable file", b.Pkg, b.EnvBinary, p)
		}
		return p
	}
	for _, p := range b.cached() {
		if Executable(p) {
			return p
		}
	}
	if p, err := exec.LookPath(b.Program); err == nil {
		return p
	}
	t.Skipf("%s: %s not found; run `bash %s` to build it, then set %s or leave it unset to use its cache",
		b.Pkg, b.Program, b.Script, b.EnvBinary)
	return ""
}

// cached lists the script's cache entries, Version first.
func (b Built) cached() []string {
	cache := os.Getenv(b.EnvCache)
	if cache == "" {
		user, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		cache = filepath.Join(user, "wshub", b.CacheDir)
	}
	found, _ := filepath.Glob(filepath.Join(cache, "*", b.Program))
	sort.Sort(sort.Reverse(sort.StringSlice(found)))
	return append([]string{filepath.Join(cache, b.Version, b.Program)}, found...)
}
