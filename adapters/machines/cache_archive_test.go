package machines

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wshub/wshub/core"
)

// cacheHost is a workspace directory with a checkout and a home, and a directory
// outside it that no archive may reach.
type cacheHost struct {
	m        *LocalMachines
	ws       *core.Workspace
	checkout string
	home     string
	outside  string
}

func newCacheHost(t *testing.T) cacheHost {
	t.Helper()
	m := &LocalMachines{Dir: filepath.Join(t.TempDir(), "workspaces")}
	ws := &core.Workspace{ID: "ws_cache"}
	h := cacheHost{m: m, ws: ws, checkout: m.checkout(ws).Dir, home: m.Home(ws), outside: t.TempDir()}
	if err := os.MkdirAll(h.checkout, 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

var testLimits = core.CacheLimits{MaxBytes: 1 << 20, MaxEntries: 100}

// entry is one tar entry of a hand-made archive.
type entry struct {
	name, body, link string
	typ              byte
}

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.link, Size: int64(len(e.body))}
		if e.typ == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Typeflag != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil && hdr.Typeflag == tar.TypeReg {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCacheArchiveRoundTripKeepsFilesLinksAndHome(t *testing.T) {
	t.Parallel()
	src, dst := newCacheHost(t), newCacheHost(t)
	write := func(p, body string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(src.checkout, "node_modules", "a", "index.js"), "module.exports = 1\n")
	write(filepath.Join(src.home, ".npm", "cache.json"), "{}")
	if err := os.Symlink("../a/index.js", filepath.Join(src.checkout, "node_modules", ".bin")); err != nil {
		t.Fatal(err)
	}
	// A link out of the checkout is kept as a link, its target not read.
	if err := os.Symlink(src.outside, filepath.Join(src.checkout, "node_modules", "out")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(src.outside, "secret"), "not archived")
	paths := []string{"node_modules", "~/.npm", "missing"}
	pack, err := src.m.PackCache(context.Background(), src.ws, paths, testLimits)
	if err != nil {
		t.Fatalf("pack: %v", err)
	}
	defer pack.Archive.Close()
	if pack.Files != 4 || pack.Bytes != int64(len("module.exports = 1\n{}")) {
		t.Fatalf("expected 4 files (2 regular, 2 links) of 21 bytes, got %+v", pack.CacheStats)
	}
	st, err := dst.m.UnpackCache(context.Background(), dst.ws, paths, pack.Archive, testLimits)
	if err != nil {
		t.Fatalf("unpack: %v", err)
	}
	if st.Files != 4 || len(st.Skipped) != 0 {
		t.Fatalf("expected 4 files restored and none skipped, got %+v", st)
	}
	for p, want := range map[string]string{
		filepath.Join(dst.checkout, "node_modules", "a", "index.js"): "module.exports = 1\n",
		filepath.Join(dst.home, ".npm", "cache.json"):                "{}",
	} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s: expected %q, got %q (%v)", p, want, got, err)
		}
	}
	if got, err := os.Readlink(filepath.Join(dst.checkout, "node_modules", "out")); err != nil || got != src.outside {
		t.Errorf("expected the link out kept as a link to %s, got %q (%v)", src.outside, got, err)
	}
	if fi, err := os.Stat(dst.home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("expected the home made private (0700), got %v (%v)", fi, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dst.m.root(dst.ws), ".cache-*")); len(left) != 0 {
		t.Errorf("expected no staging left, got %v", left)
	}
}

func TestCacheArchiveRefusesWhatCouldWriteOutsideItsPaths(t *testing.T) {
	t.Parallel()
	paths := []string{"node_modules", "~/.npm"}
	tests := []struct {
		name    string
		entries []entry
		want    string
	}{
		{"dot-dot", []entry{{name: "node_modules/../../../outside/pwn", body: "x"}}, "not a clean relative path"},
		{"absolute", []entry{{name: "/tmp/pwn", body: "x"}}, "not a clean relative path"},
		{"home dot-dot", []entry{{name: "~/../checkout/pwn", body: "x"}}, "not a clean relative path"},
		{"outside the paths", []entry{{name: ".git/hooks/pre-commit", body: "x"}}, "outside the cache's paths"},
		{"through a symlink it made", []entry{
			{name: "node_modules/evil", typ: tar.TypeSymlink, link: "OUTSIDE"},
			{name: "node_modules/evil/pwn", body: "x"}}, "under a symbolic link"},
		{"over a symlink it made", []entry{
			{name: "node_modules/evil", typ: tar.TypeSymlink, link: "OUTSIDE/pwn"},
			{name: "node_modules/evil", body: "x"}}, "appears twice"},
		{"hard link", []entry{{name: "node_modules/h", typ: tar.TypeLink, link: "/etc/passwd"}}, "not a file, directory or symbolic link"},
		{"device", []entry{{name: "node_modules/d", typ: tar.TypeChar}}, "not a file, directory or symbolic link"},
		{"too many entries", func() []entry {
			var es []entry
			for i := range testLimits.MaxEntries + 1 {
				es = append(es, entry{name: "node_modules/f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)), body: ""})
			}
			return es
		}(), "more than 100 entries"},
		{"too many bytes", []entry{{name: "node_modules/big", body: strings.Repeat("x", int(testLimits.MaxBytes)+1)}}, "more than 1048576 bytes"},
		{"not an archive", nil, "not a cache archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newCacheHost(t)
			for i := range tt.entries {
				tt.entries[i].link = strings.ReplaceAll(tt.entries[i].link, "OUTSIDE", h.outside)
			}
			data := []byte("not zstd at all")
			if tt.entries != nil {
				data = archive(t, tt.entries...)
			}
			_, err := h.m.UnpackCache(context.Background(), h.ws, paths, bytes.NewReader(data), testLimits)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("expected a refusal saying %q, got %v", tt.want, err)
			}
			if strings.Contains(err.Error(), h.m.Dir) {
				t.Errorf("expected no host path in %q", err)
			}
			if left, _ := os.ReadDir(h.outside); len(left) != 0 {
				t.Errorf("expected nothing written outside, found %v", left)
			}
			for _, p := range []string{filepath.Join(h.checkout, "node_modules"), filepath.Join(h.m.root(h.ws), "outside")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("expected nothing of a refused archive left, found %s", p)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(h.m.root(h.ws), ".cache-*")); len(left) != 0 {
				t.Errorf("expected no staging left, got %v", left)
			}
		})
	}
}

// A checkout whose cache path's parent is a symbolic link (committed, or left by
// setup) gets nothing written through it.
func TestCacheArchiveWritesNothingThroughALinkInTheCheckout(t *testing.T) {
	t.Parallel()
	h := newCacheHost(t)
	if err := os.Symlink(h.outside, filepath.Join(h.checkout, "web")); err != nil {
		t.Fatal(err)
	}
	data := archive(t, entry{name: "web/node_modules/a", body: "x"})
	_, err := h.m.UnpackCache(context.Background(), h.ws, []string{"web/node_modules"}, bytes.NewReader(data), testLimits)
	if err == nil || !strings.Contains(err.Error(), "under a symbolic link or a file in the workspace") {
		t.Fatalf("expected a refusal, got %v", err)
	}
	if left, _ := os.ReadDir(h.outside); len(left) != 0 {
		t.Errorf("expected nothing written through the link, found %v", left)
	}
}

func TestCacheKeyFileIsReadThroughNoLink(t *testing.T) {
	t.Parallel()
	h := newCacheHost(t)
	if err := os.WriteFile(filepath.Join(h.outside, "lock"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.checkout, "package-lock.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(h.outside, "lock"), filepath.Join(h.checkout, "link.lock")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.outside, filepath.Join(h.checkout, "dir")); err != nil {
		t.Fatal(err)
	}
	r, err := h.m.OpenKeyFile(h.ws, "package-lock.json")
	if err != nil {
		t.Fatalf("expected the lockfile opened, got %v", err)
	}
	r.Close()
	for _, name := range []string{"link.lock", "dir/lock", "missing.lock"} {
		if _, err := h.m.OpenKeyFile(h.ws, name); err != core.ErrNoRows {
			t.Errorf("%s: expected ErrNoRows (no such regular file), got %v", name, err)
		}
	}
}

// An archive that grows past the project's cap is not written to the end.
func TestCachePackStopsAtTheArchiveCap(t *testing.T) {
	t.Parallel()
	h := newCacheHost(t)
	if err := os.MkdirAll(filepath.Join(h.checkout, "deps"), 0o755); err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 256<<10)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.checkout, "deps", "big"), random, 0o644); err != nil {
		t.Fatal(err)
	}
	limits := testLimits
	limits.MaxArchiveBytes = 64 << 10
	_, err := h.m.PackCache(context.Background(), h.ws, []string{"deps"}, limits)
	if err == nil || !strings.Contains(err.Error(), "its archive would be larger than the 65536 bytes") {
		t.Fatalf("expected the pack refused at the cap, got %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(h.m.root(h.ws), ".cache-*")); len(left) != 0 {
		t.Errorf("expected no archive left, got %v", left)
	}
}
