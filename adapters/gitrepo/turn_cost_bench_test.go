package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkTurnCommit measures the commit of a trivial turn: the change check of a
// checkout where nothing changed (the common case of a turn that only answered), and
// of one where the turn wrote a file. Most of it is the git processes it starts;
// "remembered" is the hub's, which runs none once status found the checkout clean.
func BenchmarkTurnCommit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	ctx := context.Background()
	for _, c := range []struct {
		name                string
		changed, remembered bool
	}{{"nothing-changed", false, false}, {"nothing-changed/remembered", false, true}, {"one-file", true, false}} {
		changed := c.changed
		b.Run(c.name, func(b *testing.B) {
			co := benchCheckout(b)
			if c.remembered {
				co.Clean = &CleanTrees{} // what the hub's checkouts share (clean_trees.go)
			}
			for i := 0; b.Loop(); i++ {
				if changed {
					if err := os.WriteFile(filepath.Join(co.Dir, "work.txt"), []byte{byte('a' + i%26), '\n'}, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				if committed, err := co.CommitAll(ctx, "wshub/work", "turn"); err != nil || committed != changed {
					b.Fatalf("expected committed %v, got %v, %v", changed, committed, err)
				}
			}
		})
	}
}

// benchCheckout is a workspace checkout made from a mirror of a one-commit repository.
func benchCheckout(b *testing.B) *Checkout {
	b.Helper()
	ctx := context.Background()
	src := filepath.Join(b.TempDir(), "src")
	for _, args := range [][]string{{"init", "--quiet", "--initial-branch=main", src}, {"-C", src, "commit", "--quiet", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	m := &Mirror{Dir: filepath.Join(b.TempDir(), "mirrors")}
	mirror, _, err := m.Mirror(ctx, proj("prj_1", src))
	if err != nil {
		b.Fatal(err)
	}
	co := &Checkout{Dir: filepath.Join(b.TempDir(), "ws_1", "checkout")}
	if err := co.Create(ctx, mirror, "wshub/work", "main"); err != nil {
		b.Fatal(err)
	}
	return co
}
