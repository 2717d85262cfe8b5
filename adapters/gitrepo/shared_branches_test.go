package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// sharedFixture is two hubs ("replicas") with disks of their own, each with its own
// mirror of one upstream and its own branch cache, sharing a real database for the
// copies and the blobs.
type sharedFixture struct {
	upstream string
	store    *postgres.Store
	hubs     [2]*WorkspaceBranches
	projects [2]*core.Project
	ws       *core.Workspace
	// machine is the runtime's checkout, where turns commit.
	machine *Checkout
}

func newSharedFixture(t *testing.T) *sharedFixture {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	f := &sharedFixture{upstream: filepath.Join(root, "upstream")}
	gitT(t, root, "init", "-q", "-b", "main", f.upstream)
	gitT(t, f.upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
	f.store, _ = pgtest.NewStore(t)
	f.ws = &core.Workspace{ID: "ws_0123456789abcdef", ProjectID: "prj_s", Branch: "feature-x", BaseRef: "main"}
	for _, q := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_s', 's', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
			VALUES ('prj_s', 'acct_s', '/repo', 'repo', 'ready', now(), now())`,
		`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, created_at, updated_at)
			VALUES ('ws_0123456789abcdef', 'acct_s', 'prj_s', 'process', 'agent_1', 'm', 'full-access', 'feature-x', 'main',
			'api', 'ready', 'ready', 'running', 'online', now(), now())`,
	} {
		if _, err := f.store.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	for i := range f.hubs {
		disk := filepath.Join(root, "hub"+string(rune('a'+i)))
		mirror := &Mirror{Dir: filepath.Join(disk, "mirrors")}
		f.hubs[i] = &WorkspaceBranches{Dir: filepath.Join(disk, "branches"), Copies: postgres.NewBranchCopies(f.store),
			Blobs: postgres.NewBlobs(f.store), Mirror: mirror}
		f.projects[i] = &core.Project{ID: "prj_s", Repository: f.upstream, MirrorPath: mirror.Path("prj_s")}
	}
	return f
}

// checkout gives the machine the branch from hub i.
func (f *sharedFixture) checkout(t *testing.T, i int) string {
	t.Helper()
	bundle := filepath.Join(t.TempDir(), "checkout.bundle")
	out, err := os.Create(bundle)
	if err != nil {
		t.Fatal(err)
	}
	head, err := f.hubs[i].Bundle(context.Background(), f.ws, f.projects[i], out)
	out.Close()
	if err != nil {
		t.Fatalf("checkout from hub %d: %v", i, err)
	}
	f.machine = &Checkout{Dir: filepath.Join(t.TempDir(), "checkout")}
	if err := f.machine.CreateFromBundle(context.Background(), bundle, f.ws.Branch); err != nil {
		t.Fatal(err)
	}
	return head
}

// turn commits a file on the machine and uploads the commits since since to hub i.
func (f *sharedFixture) turn(t *testing.T, i int, name, since string) (string, error) {
	t.Helper()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(f.machine.Dir, name), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.machine.CommitAll(ctx, f.ws.Branch, "turn "+name); !ok || err != nil {
		t.Fatalf("commit: %v %v", ok, err)
	}
	return f.hubs[i].Import(ctx, f.ws, f.projects[i], bytes.NewReader(f.bundleSince(t, since)))
}

func (f *sharedFixture) blobCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.store.DB().Get(&n, `SELECT count(*) FROM blobs`); err != nil {
		t.Fatal(err)
	}
	return n
}

// One workspace's branch served by two hubs in turn: the first checkout is recorded
// once; each hub takes commits on top of what the other took, from a cache it made
// from its own mirror (cloned on demand) or brought up from the shared bundle; the
// head every hub reports is the shared one; a push from either pushes it all; and only
// the newest bundle is kept.
func TestBranchesAreSharedByHubsWithNoSharedDisk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSharedFixture(t)
	if _, _, err := f.hubs[0].Mirror.Mirror(ctx, proj("prj_s", f.upstream)); err != nil {
		t.Fatal(err)
	}
	base := f.checkout(t, 0)
	if head, err := f.hubs[1].Head(ctx, f.ws); err != nil || head != base {
		t.Fatalf("expected the other hub to report the recorded head %s, got %q (%v)", base, head, err)
	}
	if n := f.blobCount(t); n != 0 {
		t.Fatalf("expected no bundle while the branch is at its base, got %d blobs", n)
	}

	// Hub 1 has no mirror and no cache: it clones the mirror and makes the cache.
	h1, err := f.turn(t, 1, "one.txt", base)
	if err != nil {
		t.Fatalf("import at the hub with no mirror: %v", err)
	}
	// Hub 0's cache is behind: it catches up from the bundle before it takes more.
	h2, err := f.turn(t, 0, "two.txt", h1)
	if err != nil {
		t.Fatalf("import at the hub whose cache was behind: %v", err)
	}
	for i, h := range f.hubs {
		if head, err := h.Head(ctx, f.ws); err != nil || head != h2 {
			t.Fatalf("hub %d: expected head %s, got %q (%v)", i, h2, head, err)
		}
	}
	if n := f.blobCount(t); n != 1 {
		t.Fatalf("expected only the newest bundle kept, got %d blobs", n)
	}
	// The same upload again, at the other hub (a retry after a lost answer): taken once.
	if again, err := f.turn(t, 1, "three.txt", h2); err != nil {
		t.Fatal(err)
	} else if h, err := f.hubs[0].Import(ctx, f.ws, f.projects[0], bytes.NewReader(f.bundleSince(t, h2))); err != nil || h != again {
		t.Fatalf("expected the same upload at the other hub to give head %s, got %q (%v)", again, h, err)
	}
	head, _ := f.hubs[0].Head(ctx, f.ws)
	if err := f.hubs[1].Push(ctx, f.ws, f.projects[1]); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := gitT(t, f.upstream, "rev-parse", f.ws.Branch); got != head {
		t.Fatalf("expected the pushed branch at %s, got %s", head, got)
	}
	for _, name := range []string{"one.txt", "two.txt", "three.txt"} {
		if got := gitT(t, f.upstream, "show", f.ws.Branch+":"+name); got != name {
			t.Errorf("expected %s pushed, got %q", name, got)
		}
	}
	// A new machine checks out from the hub whose cache is behind, and gets it all.
	if got := f.checkout(t, 0); got != head {
		t.Fatalf("expected a checkout at %s, got %s", head, got)
	}

	// Removed: the row, the bundle and this hub's cache are gone.
	if err := f.hubs[0].Remove(ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	if n := f.blobCount(t); n != 0 {
		t.Errorf("expected the bundle deleted, got %d blobs", n)
	}
	if _, err := postgres.NewBranchCopies(f.store).BranchCopy(ctx, f.ws.ID); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("expected the copy deleted, got %v", err)
	}
}

// bundleSince bundles the machine's branch since since.
func (f *sharedFixture) bundleSince(t *testing.T, since string) []byte {
	t.Helper()
	up := filepath.Join(t.TempDir(), "again.bundle")
	if made, err := f.machine.BundleSince(context.Background(), f.ws.Branch, since, up); !made || err != nil {
		t.Fatalf("bundle since: %v %v", made, err)
	}
	body, err := os.ReadFile(up)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// A hub whose mirror was fetched before the commit another hub started the branch
// from fetches it again to make its cache.
func TestABranchCacheFetchesTheMirrorThatLacksItsBase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSharedFixture(t)
	for _, h := range f.hubs {
		if _, _, err := h.Mirror.Mirror(ctx, proj("prj_s", f.upstream)); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, f.upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "newer")
	if err := f.hubs[0].Mirror.Refresh(ctx, proj("prj_s", f.upstream), 0); err != nil {
		t.Fatal(err)
	}
	base := f.checkout(t, 0)
	if want := gitT(t, f.upstream, "rev-parse", "main"); base != want {
		t.Fatalf("expected the branch from the newer main %s, got %s", want, base)
	}
	if _, err := f.turn(t, 1, "one.txt", base); err != nil {
		t.Fatalf("import at the hub with the older mirror: %v", err)
	}
}

// Commits taken before branches were shared (the cache is the only copy) are
// published the first time the branch is read, and then served like any other.
func TestACacheFromBeforeSharingIsAdopted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSharedFixture(t)
	if _, _, err := f.hubs[0].Mirror.Mirror(ctx, proj("prj_s", f.upstream)); err != nil {
		t.Fatal(err)
	}
	shared := f.hubs[0]
	f.hubs[0] = &WorkspaceBranches{Dir: shared.Dir, Mirror: shared.Mirror} // the hub before the upgrade
	base := f.checkout(t, 0)
	head, err := f.turn(t, 0, "old.txt", base)
	if err != nil {
		t.Fatal(err)
	}
	f.hubs[0] = shared
	if got, err := shared.Head(ctx, f.ws); err != nil || got != head {
		t.Fatalf("expected the cache's head %s adopted, got %q (%v)", head, got, err)
	}
	if got := f.checkout(t, 1); got != head {
		t.Fatalf("expected the other hub to check out the adopted head %s, got %s", head, got)
	}
}
