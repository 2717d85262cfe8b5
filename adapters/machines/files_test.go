package machines

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wshub/wshub/core"
)

// attachmentHost is a workspace whose checkout the test shapes as a repository or a
// turn could, a directory outside it, and another workspace's checkout.
type attachmentHost struct {
	m        *LocalMachines
	ws       *core.Workspace
	checkout string
	outside  string
	other    string
}

func newAttachmentHost(t *testing.T) attachmentHost {
	t.Helper()
	m := &LocalMachines{Dir: filepath.Join(t.TempDir(), "workspaces")}
	ws := &core.Workspace{ID: "ws_mine"}
	h := attachmentHost{m: m, ws: ws, checkout: m.checkout(ws).Dir, outside: t.TempDir(),
		other: filepath.Join(m.Dir, "ws_theirs", "checkout")}
	for _, d := range []string{h.checkout, h.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// empty fails unless dir holds nothing.
func empty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("expected nothing written in %s, found %d entries (first %q)", dir, len(entries), entries[0].Name())
	}
}

func TestAttachmentsAreNotWrittenThroughSymlinkedDirectories(t *testing.T) {
	tests := []struct {
		name  string
		plant func(h attachmentHost) string // returns the directory that must stay empty
	}{
		{"committed .context/files -> outside", func(h attachmentHost) string {
			symlink(t, h.outside, filepath.Join(h.checkout, ".context", "files"))
			return h.outside
		}},
		{"committed .context -> outside", func(h attachmentHost) string {
			symlink(t, h.outside, filepath.Join(h.checkout, ".context"))
			return h.outside
		}},
		{".context -> another workspace's checkout", func(h attachmentHost) string {
			symlink(t, h.other, filepath.Join(h.checkout, ".context"))
			return h.other
		}},
		{"committed .context/files -> a directory of the checkout", func(h attachmentHost) string {
			src := filepath.Join(h.checkout, "src")
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			symlink(t, "../src", filepath.Join(h.checkout, ".context", "files"))
			return src
		}},
		{"relative .context/files -> ../../outside", func(h attachmentHost) string {
			rel, _ := filepath.Rel(filepath.Join(h.checkout, ".context"), h.outside)
			symlink(t, rel, filepath.Join(h.checkout, ".context", "files"))
			return h.outside
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newAttachmentHost(t)
			mustStayEmpty := tt.plant(h)
			_, err := h.m.WriteFile(context.Background(), h.ws, "asset_1-notes.txt", []byte("attached"))
			if !errors.Is(err, errNotADirectory) {
				t.Errorf("expected the write refused (not a directory), got %v", err)
			}
			empty(t, mustStayEmpty)
		})
	}
}

func TestAttachmentReplacesASymlinkPlantedAtItsName(t *testing.T) {
	// A turn replaced the attachment's file with a symlink to a file of the hub's: the
	// next write replaces the symlink and leaves the target alone.
	h := newAttachmentHost(t)
	target := filepath.Join(h.outside, "hub-file")
	if err := os.WriteFile(target, []byte("the hub's"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(h.checkout, ".context", "files", "asset_1-notes.txt")
	symlink(t, target, link)
	rel, err := h.m.WriteFile(context.Background(), h.ws, "asset_1-notes.txt", []byte("attached"))
	if err != nil || rel != filepath.Join(".context", "files", "asset_1-notes.txt") {
		t.Fatalf("expected the attachment written at .context/files/asset_1-notes.txt, got %q, %v", rel, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "the hub's" {
		t.Errorf("expected the symlink's target untouched, it now holds %q", b)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("expected a regular file at the attachment's name, got %v, %v", fi, err)
	}
	if b, _ := os.ReadFile(link); string(b) != "attached" {
		t.Errorf("expected the attachment's bytes, got %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(link))
	if len(entries) != 1 {
		t.Errorf("expected only the attachment in .context/files (no temporary file left), got %d entries", len(entries))
	}
}

func TestAttachmentWrittenInAFreshCheckout(t *testing.T) {
	h := newAttachmentHost(t)
	for range 2 { // the second write replaces the first
		rel, err := h.m.WriteFile(context.Background(), h.ws, "../../etc/passwd", []byte("x"))
		if err != nil || rel != filepath.Join(".context", "files", "passwd") {
			t.Fatalf("expected the name reduced to its base and written, got %q, %v", rel, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(h.checkout, ".context", "files", "passwd")); err != nil || string(b) != "x" {
		t.Fatalf("expected the file in the checkout, got %q, %v", b, err)
	}
}
