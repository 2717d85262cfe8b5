package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A checkout git status found clean, and that nothing touched since, is committed with
// no git at all; any change to its files, its index or its refs asks status again.
func TestACommitWhereNothingChangedSinceStatusFoundItCleanRunsNoGit(t *testing.T) {
	co, _ := hostileCheckout(t)
	ctx := context.Background()
	var commands func() []string
	co.Git, commands = countingGit(t)
	// A change time before the walk's start is trusted here: the file system's
	// granularity is tested apart (racy), and a test that waited it out would be slow.
	co.Clean = &CleanTrees{Window: time.Nanosecond}
	turn := func(what string, wantCommitted bool, want ...string) {
		t.Helper()
		committed, err := co.CommitAll(ctx, "wshub/work", what)
		if err != nil || committed != wantCommitted {
			t.Fatalf("%s: expected committed %v, got %v, %v", what, wantCommitted, committed, err)
		}
		if got := commands(); !slices.Equal(got, want) {
			t.Errorf("%s: expected git %q, got %q", what, want, got)
		}
	}
	// Files written hours ago, as git sees them: written within the second of the
	// index, git status would rewrite the index (its "racily clean" entries), once
	// per status until the second has passed. Each write is given other hours, or git
	// (which compares seconds) would not see a file rewritten at the same size.
	hours := 0
	written := func(path, content string) {
		t.Helper()
		writeFile(t, path, content)
		hours++
		then := time.Now().Add(-time.Duration(hours) * time.Hour)
		if err := os.Chtimes(path, then, then); err != nil {
			t.Fatal(err)
		}
	}
	turn("first look", false, "status")
	turn("nothing since", false)
	turn("nothing still", false)

	tracked := filepath.Join(co.Dir, "work.txt")
	written(tracked, "work\n")
	turn("a new file", true, "status", "add", "commit")
	turn("after the new file", false, "status")
	turn("nothing since the new file", false)
	written(tracked, "WORK\n") // the same size, written in place
	turn("a file rewritten in place", true, "status", "add", "commit")
	turn("after the commit", false, "status")
	turn("nothing since the commit", false)

	written(filepath.Join(co.Dir, "new.txt"), "new\n")
	testGit(t, co.Dir, "add", "new.txt")
	turn("a file the agent staged", true, "status", "add", "diff-index", "commit")
	turn("after that", false, "status")

	testGit(t, co.Dir, "branch", "other")
	turn("a ref the agent made", false, "status")
	turn("nothing since the ref", false)

	if err := os.Chmod(tracked, 0o755); err != nil {
		t.Fatal(err)
	}
	turn("a file made executable", true, "status", "add", "commit")

	co.Clean.Forget(co.Dir)
	turn("forgotten", false, "status")
}

// A walk that saw a change within the file system's time granularity before it
// started is not trusted: a file changed again right after it could look the same.
func TestATreeChangedJustBeforeItsWalkIsNotTrusted(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		latest time.Time
		racy   bool
	}{{now.Add(-time.Second), false}, {now.Add(-racyWindow + time.Millisecond), true}, {now, true}, {now.Add(time.Second), true}} {
		s := &treeSum{start: now, window: racyWindow, latest: c.latest}
		if s.racy() != c.racy {
			t.Errorf("a change %s before the walk: expected racy %v", now.Sub(c.latest), c.racy)
		}
	}
	var trees CleanTrees
	s := trees.newTreeSum()
	s.latest = time.Now()
	trees.keep("/a", s)
	if trees.clean("/a", s) {
		t.Error("expected a racy walk neither kept nor trusted")
	}
}
