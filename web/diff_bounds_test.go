package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"

	"github.com/wshub/wshub/adapters/assets"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// diffGit is the diff page's git in these tests: git itself, but each run of
// `git diff` first writes its process id to diffs and its cgroups to cgroups, and, while the file slow exists,
// becomes a diff that never ends (the process the hub started, exec'd into sleep).
const diffGit = `#!/bin/sh
for a; do
	if [ "$a" = diff ]; then
		echo $$ >>"$DIR/diffs"
		cat /proc/$$/cgroup >>"$DIR/cgroups"
		[ -e "$DIR/slow" ] && exec sleep 120
		break
	fi
done
exec git "$@"
`

// boundedDiffs is a site whose diff page runs diffGit, with a large-file bound of
// 16 KiB, one diff at a time per account and the deadline given; its agent writes a small file and one
// of 30,000 bytes (600 lines: under the patch's bounds, so shown in full were it not
// for the size).
type boundedDiffs struct {
	*site
	dir string
}

func newBoundedDiffs(t *testing.T, deadline time.Duration) *boundedDiffs {
	dir := t.TempDir()
	git := filepath.Join(dir, "git-wrapper")
	if err := os.WriteFile(git, []byte(strings.Replace(diffGit, "$DIR", dir, -1)), 0o755); err != nil {
		t.Fatal(err)
	}
	agent := `echo small > small.txt; awk 'BEGIN { for (i = 1; i <= 600; i++) printf "%049d\n", i }' > big.txt; echo made files`
	s := newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", agent), hubtest.WithConfig(func(c *hub.Config) {
		c.DiffGit, c.DiffLargeFile, c.MaxDiffsPerAccount, c.DiffTimeout = git, 16<<10, 1, deadline
	}))
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	if code, _, _ := s.signIn("ada-1"); code != 200 {
		t.Fatalf("expected Ada signed in, got %d", code)
	}
	return &boundedDiffs{site: s, dir: dir}
}

// workspace starts a workspace and waits for its agent's files.
func (b *boundedDiffs) workspace() string {
	id := b.start("make files")
	b.waitPage("/app/workspaces/"+id, "made files")
	return id
}

// diffs are the process ids of the git diffs run so far.
func (b *boundedDiffs) diffs() []int {
	raw, err := os.ReadFile(filepath.Join(b.dir, "diffs"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		b.t.Fatal(err)
	}
	var pids []int
	for _, l := range strings.Fields(string(raw)) {
		pid, err := strconv.Atoi(l)
		if err != nil {
			b.t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// slow makes every git diff from now on one that never ends.
func (b *boundedDiffs) slow() {
	if err := os.WriteFile(filepath.Join(b.dir, "slow"), nil, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// view asks for a workspace's diff page in the background, until cancel; its answer's
// status (or 0, cut) arrives on the channel.
func (b *boundedDiffs) view(id string) (context.CancelFunc, <-chan int) {
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", b.hub.URL+"/app/workspaces/"+id+"/diff", nil)
	if err != nil {
		b.t.Fatal(err)
	}
	status := make(chan int, 1)
	go func() {
		res, err := b.web.Do(req)
		if err != nil {
			status <- 0
			return
		}
		res.Body.Close()
		status <- res.StatusCode
	}()
	return cancel, status
}

// running: the process is alive (not gone, and not a zombie nobody waited for).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z") && syscall.Kill(pid, 0) == nil
}

// The diff page is bounded work: a file over the size bound is summarised without its
// patch, its git runs in a cgroup of its own, a page is computed once per head (for
// every replica), a view cut by its reader kills its git, and an account past its
// diffs at once is told so in words.
func TestTheDiffPageIsBoundedWork(t *testing.T) {
	b := newBoundedDiffs(t, time.Minute) // none of these views may end by the deadline
	first := b.workspace()
	diff := "/app/workspaces/" + first + "/diff"

	t.Run("a file over the size bound is summarised by its size, without its patch", func(t *testing.T) {
		page := b.page(diff)
		for _, want := range []string{"2 files changed", "too large to show (29 KiB)", "The file is too large to show (29 KiB)", addedLine("small")} {
			if !strings.Contains(page, want) {
				t.Errorf("expected %q on the diff page:\n%s", want, page)
			}
		}
		if strings.Contains(page, addedLine("0000000000000000000000000000000000000000000000001")) {
			t.Errorf("expected big.txt's lines not shown")
		}
	})

	t.Run("its git runs in a cgroup of its own", func(t *testing.T) {
		if cgroups.Mode() == cgroups.Unavailable {
			t.Skip("this machine has no cgroup file system mounted at /sys/fs/cgroup")
		}
		groups, err := os.ReadFile(filepath.Join(b.dir, "cgroups"))
		if err != nil || !strings.Contains(string(groups), "-job-") {
			t.Errorf("expected git diff in a job's cgroup, got %v:\n%s", err, groups)
		}
	})

	t.Run("a second view of the same head runs no git diff", func(t *testing.T) {
		before := len(b.diffs())
		if before == 0 {
			t.Fatalf("expected the first view to have run git diff")
		}
		page := b.page(diff)
		if !strings.Contains(page, addedLine("small")) {
			t.Errorf("expected the same diff again:\n%s", page)
		}
		if after := len(b.diffs()); after != before {
			t.Errorf("expected no git diff for a head already shown, got %d more", after-before)
		}
	})

	t.Run("another replica reads the kept diff without running git diff", func(t *testing.T) {
		other := b.hub.Beside(t, nil) // its own memory; the blob store and database are shared
		before := len(b.diffs())
		res, err := b.web.Get(other.URL + diff)
		if err != nil {
			t.Fatal(err)
		}
		if code, _, page := read(t, res); code != 200 || !strings.Contains(page, addedLine("small")) {
			t.Fatalf("expected the diff from the other replica, got %d:\n%s", code, page)
		}
		if after := len(b.diffs()); after != before {
			t.Errorf("expected the other replica to read the kept diff, got %d git diffs more", after-before)
		}
	})

	second := b.workspace()
	b.slow()

	t.Run("a view cut by its reader kills its git", func(t *testing.T) {
		known := len(b.diffs())
		cancel, status := b.view(second)
		defer cancel()
		eventually.Eventually(t, 10*time.Second, "the view's git diff to start", func() bool { return len(b.diffs()) > known })
		pid := b.diffs()[known]
		cancel()
		if got := <-status; got != 0 {
			t.Fatalf("expected the view cut, got %d", got)
		}
		eventually.Eventually(t, 10*time.Second, "the cut view's git diff killed", func() bool { return !running(pid) })
	})

	t.Run("past the account's diffs at once, the page says so in words", func(t *testing.T) {
		known := len(b.diffs())
		cancel, status := b.view(second)
		defer func() {
			cancel()
			<-status
		}()
		eventually.Eventually(t, 10*time.Second, "the first view's git diff to start", func() bool { return len(b.diffs()) > known })
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		req, _ := http.NewRequestWithContext(ctx, "GET", b.hub.URL+"/app/workspaces/"+second+"/diff", nil)
		res, err := b.web.Do(req)
		if err != nil {
			t.Fatalf("expected a second diff at once refused, got %v", err)
		}
		code, _, body := read(t, res)
		if code != 429 || !strings.Contains(body, "already computing as many diffs for this account") || res.Header.Get("Retry-After") == "" {
			t.Errorf("expected 429 in words with Retry-After, got %d (Retry-After %q):\n%s", code, res.Header.Get("Retry-After"), body)
		}
		// A diff already made is read without a place.
		if page := b.page(diff); !strings.Contains(page, addedLine("small")) {
			t.Errorf("expected the first workspace's diff read meanwhile:\n%s", page)
		}
	})

	t.Run("a deleted workspace's kept diff goes with it", func(t *testing.T) {
		blobs, err := assets.NewFS(filepath.Join(b.hub.Config.DataDir, "assets"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := blobs.Get(context.Background(), "diffs/"+first); err != nil {
			t.Fatalf("expected the first workspace's diff kept, got %v", err)
		}
		confirm := b.page("/app/workspaces/" + first + "/delete")
		if code, _, body := b.post("/app/workspaces/"+first+"/delete", url.Values{"csrf": {csrfOf(t, confirm)}}); code != 200 {
			t.Fatalf("expected the workspace deleted, got %d:\n%s", code, body)
		}
		eventually.Eventually(t, 10*time.Second, "the kept diff removed", func() bool {
			_, err := blobs.Get(context.Background(), "diffs/"+first)
			return errors.Is(err, core.ErrNoRows)
		})
	})
}

// A diff past its deadline is given up, its git killed, and the page says so; the
// next view of the same head says so again without running git.
func TestADiffPastItsDeadlineIsGivenUpAndSaidOnce(t *testing.T) {
	b := newBoundedDiffs(t, time.Second)
	id := b.workspace()
	// The workspace's page has counted its changes (its work section) by now.
	before := len(b.diffs())
	b.slow()
	const said = "These changes took longer to compute than the hub gives them"
	if page := b.page("/app/workspaces/" + id + "/diff"); !strings.Contains(page, said) {
		t.Fatalf("expected the page to say the diff took too long:\n%s", page)
	}
	ran := b.diffs()[before:]
	if len(ran) != 1 || running(ran[0]) {
		t.Fatalf("expected one git diff, killed, got %v", ran)
	}
	if page := b.page("/app/workspaces/" + id + "/diff"); !strings.Contains(page, said) || len(b.diffs()) != before+1 {
		t.Errorf("expected the same answer without another git diff, got %d git diffs:\n%s", len(b.diffs())-before, page)
	}
}

// A branch slow to count does not hold its workspace's page: the page says it is
// being counted, and the count, given up at the diff's deadline, is said once it is.
func TestAWorkspacesPageDoesNotWaitForASlowCount(t *testing.T) {
	b := newBoundedDiffs(t, 3*time.Second)
	b.slow()
	id := b.start("make files")
	path := "/app/workspaces/" + id
	counting := false
	eventually.Value(t, time.Minute, "the count given up", func() (string, error) {
		began := time.Now()
		page := b.page(path)
		if took := time.Since(began); took > 2500*time.Millisecond {
			t.Fatalf("expected the page within its wait for the count, it took %v", took)
		}
		counting = counting || strings.Contains(page, "The branch is being counted")
		if !strings.Contains(page, "made files") || !strings.Contains(page, "Too many to count in the time the hub gives them.") {
			return "", errors.New("not yet")
		}
		return page, nil
	})
	if !counting {
		t.Errorf("expected the page to say the branch was being counted while it was")
	}
}
