package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A remote workspace's branch goes to its machine as a bundle, comes back with a
// turn's commits as a bundle, and is pushed from the hub.
func TestWorkspaceBranchRoundTrip(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	upstream := filepath.Join(base, "upstream")
	gitT(t, base, "init", "-q", "-b", "main", upstream)
	gitT(t, upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
	mirror := filepath.Join(base, "mirror.git")
	gitT(t, base, "clone", "-q", "--mirror", upstream, mirror)

	b := &WorkspaceBranches{Dir: filepath.Join(base, "branches")}
	ws := &core.Workspace{ID: "ws_0123456789abcdef", Branch: "feature-x", BaseRef: "main"}
	bundle := filepath.Join(base, "checkout.bundle")
	f, err := os.Create(bundle)
	if err != nil {
		t.Fatal(err)
	}
	head, err := b.Bundle(ctx, ws, &core.Project{MirrorPath: mirror}, f)
	f.Close()
	if err != nil || head != gitT(t, upstream, "rev-parse", "main") {
		t.Fatalf("bundle: head %q, %v", head, err)
	}
	co := &Checkout{Dir: filepath.Join(base, "machine", "checkout")}
	if err := co.CreateFromBundle(ctx, bundle, ws.Branch); err != nil {
		t.Fatalf("create from bundle: %v", err)
	}
	if got := gitT(t, co.Dir, "rev-parse", "--abbrev-ref", "HEAD"); got != ws.Branch {
		t.Fatalf("expected the checkout on %s, got %s", ws.Branch, got)
	}
	if err := os.WriteFile(filepath.Join(co.Dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := co.CommitAll(ctx, ws.Branch, "turn"); !ok || err != nil {
		t.Fatalf("commit: %v %v", ok, err)
	}
	up := filepath.Join(base, "up.bundle")
	if made, err := co.BundleSince(ctx, ws.Branch, head, up); !made || err != nil {
		t.Fatalf("bundle since: %v %v", made, err)
	}
	in, err := os.Open(up)
	if err != nil {
		t.Fatal(err)
	}
	newHead, err := b.Import(ctx, ws, &core.Project{}, in)
	in.Close()
	if err != nil || newHead != gitT(t, co.Dir, "rev-parse", "HEAD") {
		t.Fatalf("import: head %q, %v", newHead, err)
	}
	if err := b.Push(ctx, ws, &core.Project{Repository: upstream}); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := gitT(t, upstream, "show", ws.Branch+":new.txt"); got != "new" {
		t.Fatalf("expected new.txt pushed, got %q", got)
	}
	if ws.BaseRef = "nope"; true {
		ws.ID = "ws_0123456789abcdeX"
		if _, err := b.Bundle(ctx, ws, &core.Project{MirrorPath: mirror}, &strings.Builder{}); err != core.ErrBaseRefNotFound {
			t.Fatalf("expected ErrBaseRefNotFound, got %v", err)
		}
	}
}
