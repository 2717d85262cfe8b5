package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// diffFixture is a project mirror whose main has a few files, and a local workspace's
// checkout of it on its own branch, laid out as LocalMachines lays them.
type diffFixture struct {
	base, upstream, mirror string
	ws                     *core.Workspace
	co                     *Checkout
	diffs                  *BranchDiffs
}

func newDiffFixture(t *testing.T, files map[string]string) *diffFixture {
	t.Helper()
	f := &diffFixture{base: t.TempDir()}
	f.upstream = filepath.Join(f.base, "upstream")
	gitT(t, f.base, "init", "-q", "-b", "main", f.upstream)
	for name, content := range files {
		write(t, filepath.Join(f.upstream, name), content)
	}
	gitT(t, f.upstream, "add", "-A")
	gitT(t, f.upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
	f.mirror = filepath.Join(f.base, "mirror.git")
	gitT(t, f.base, "clone", "-q", "--mirror", f.upstream, f.mirror)
	f.ws = &core.Workspace{ID: "ws_0123456789abcdef", Branch: "feature-x", BaseRef: "main", ProviderID: core.LocalProviderID}
	f.diffs = &BranchDiffs{Checkouts: filepath.Join(f.base, "workspaces"), Branches: filepath.Join(f.base, "branches")}
	f.co = &Checkout{Dir: filepath.Join(f.diffs.Checkouts, f.ws.ID, "checkout")}
	if err := f.co.Create(context.Background(), f.mirror, f.ws.Branch, f.ws.BaseRef); err != nil {
		t.Fatalf("create the checkout: %v", err)
	}
	return f
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *diffFixture) commit(t *testing.T) {
	t.Helper()
	if ok, err := f.co.CommitAll(context.Background(), f.ws.Branch, "turn"); !ok || err != nil {
		t.Fatalf("expected the turn committed, got %v, %v", ok, err)
	}
}

func (f *diffFixture) diff(t *testing.T, remote bool, page int) *core.BranchDiff {
	t.Helper()
	d, err := f.diffs.Diff(context.Background(), f.ws, core.DiffQuery{Remote: remote, Page: page})
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	return d
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// A branch that modifies, adds, deletes and renames files, with a space, unicode and a
// newline in paths, a binary file and one over the patch bound: each file's status
// and counts, and its patch's lines with their numbers.
func TestBranchDiffListsEveryKindOfChangeWithItsLines(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"keep.txt": "a\nb\nc\n", "del.txt": "gone\n", "ren.txt": numbered(10)})
	dir := f.co.Dir
	write(t, filepath.Join(dir, "keep.txt"), "a\nB\nc\nd\n")
	if err := os.Remove(filepath.Join(dir, "del.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "ren.txt"), filepath.Join(dir, "new name é.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sp ace.txt"), "n\n")
	write(t, filepath.Join(dir, "dir", "ünï code.txt"), "<b>&</b>\n")
	write(t, filepath.Join(dir, "line\nbreak.txt"), "x\n")
	write(t, filepath.Join(dir, "bin.dat"), "\x00\x01\x02binary")
	write(t, filepath.Join(dir, "big.txt"), numbered(core.MaxPatchLines+500))
	f.commit(t)

	d := f.diff(t, false, 1)
	if d.NoCopy || d.BaseMissing || d.Base != gitT(t, f.upstream, "rev-parse", "main") || d.Head != gitT(t, dir, "rev-parse", f.ws.Branch) {
		t.Fatalf("expected the branch against main's commit, got %+v", d)
	}
	byPath := map[string]core.DiffFile{}
	for _, file := range d.Files {
		byPath[file.Path] = file
	}
	want := []core.DiffFile{
		{Path: "keep.txt", Status: core.FileModified, Additions: 2, Deletions: 1},
		{Path: "del.txt", Status: core.FileDeleted, Deletions: 1},
		{Path: "new name é.txt", OldPath: "ren.txt", Status: core.FileRenamed},
		{Path: "sp ace.txt", Status: core.FileAdded, Additions: 1},
		{Path: "dir/ünï code.txt", Status: core.FileAdded, Additions: 1},
		{Path: "line\nbreak.txt", Status: core.FileAdded, Additions: 1},
		{Path: "bin.dat", Status: core.FileAdded, Binary: true, Size: 9},
		{Path: "big.txt", Status: core.FileAdded, Additions: core.MaxPatchLines + 500},
	}
	for _, w := range want {
		if got := byPath[w.Path]; got != w {
			t.Errorf("expected %+v, got %+v", w, got)
		}
	}
	if len(d.Files) != len(want) || d.MoreFiles || d.Pages != 1 || d.Page != 1 {
		t.Errorf("expected %d files on one page, got %d (more %v), page %d of %d", len(want), len(d.Files), d.MoreFiles, d.Page, d.Pages)
	}
	if d.Additions != 2+1+1+1+core.MaxPatchLines+500 || d.Deletions != 2 {
		t.Errorf("expected the totals of the files, got +%d -%d", d.Additions, d.Deletions)
	}
	patches := map[string]core.FilePatch{}
	for _, p := range d.Patches {
		patches[p.File.Path] = p
	}
	if len(patches) != len(want) {
		t.Fatalf("expected a patch entry per file, got %d", len(d.Patches))
	}
	keep := []core.DiffLine{
		{Kind: core.LineHunk, Text: "@@ -1,3 +1,4 @@"},
		{Kind: core.LineContext, Text: "a", OldLine: 1, NewLine: 1},
		{Kind: core.LineDelete, Text: "b", OldLine: 2},
		{Kind: core.LineAdd, Text: "B", NewLine: 2},
		{Kind: core.LineContext, Text: "c", OldLine: 3, NewLine: 3},
		{Kind: core.LineAdd, Text: "d", NewLine: 4},
	}
	if got := patches["keep.txt"].Lines; !slices.Equal(got, keep) {
		t.Errorf("expected keep.txt's patch %+v, got %+v", keep, got)
	}
	for path, text := range map[string]string{"sp ace.txt": "n", "dir/ünï code.txt": "<b>&</b>", "line\nbreak.txt": "x"} {
		want := []core.DiffLine{{Kind: core.LineHunk, Text: "@@ -0,0 +1 @@"}, {Kind: core.LineAdd, Text: text, NewLine: 1}}
		if got := patches[path].Lines; !slices.Equal(got, want) {
			t.Errorf("expected %q's patch %+v, got %+v", path, want, got)
		}
	}
	if got := patches["del.txt"].Lines; len(got) != 2 || got[1] != (core.DiffLine{Kind: core.LineDelete, Text: "gone", OldLine: 1}) {
		t.Errorf("expected del.txt's one deleted line, got %+v", got)
	}
	if p := patches["new name é.txt"]; len(p.Lines) != 0 || p.TooLarge || p.Omitted {
		t.Errorf("expected the unchanged rename without lines, got %+v", p)
	}
	if p := patches["bin.dat"]; len(p.Lines) != 0 || p.TooLarge {
		t.Errorf("expected the binary file without a patch, got %+v", p)
	}
	if p := patches["big.txt"]; !p.TooLarge || len(p.Lines) != 0 {
		t.Errorf("expected big.txt's patch too large to show, got %d lines, too large %v", len(p.Lines), p.TooLarge)
	}
}

// A file of few, long lines passes the line bound and is stopped by the byte bound:
// git is cut off, not read to its end.
func TestBranchDiffStopsAPatchOverTheByteBound(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	long := strings.Repeat("x", core.MaxPatchBytes/4) + "\n"
	write(t, filepath.Join(f.co.Dir, "wide.txt"), strings.Repeat(long, 8))
	f.commit(t)
	d := f.diff(t, false, 1)
	if len(d.Patches) != 1 || !d.Patches[0].TooLarge || d.Patches[0].File.Additions != 8 {
		t.Fatalf("expected wide.txt's 8 lines too large to show, got %+v", d.Files)
	}
}

// A file past the large-file bound is not read: it is listed with its size, without
// line counts or a patch, whether added or modified; a smaller one beside it is whole.
func TestBranchDiffSummarisesAFileOverTheSizeBound(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"grown.txt": numbered(10)})
	f.diffs.LargeFile = 4 << 10
	write(t, filepath.Join(f.co.Dir, "grown.txt"), numbered(1000))
	write(t, filepath.Join(f.co.Dir, "big.txt"), numbered(600))
	write(t, filepath.Join(f.co.Dir, "small.txt"), numbered(3))
	f.commit(t)
	d := f.diff(t, false, 1)
	want := map[string]core.DiffFile{
		"big.txt":   {Path: "big.txt", Status: core.FileAdded, Large: true, Size: int64(len(numbered(600)))},
		"grown.txt": {Path: "grown.txt", Status: core.FileModified, Large: true, Size: int64(len(numbered(1000)))},
		"small.txt": {Path: "small.txt", Status: core.FileAdded, Additions: 3},
	}
	if len(d.Files) != len(want) || len(d.Patches) != len(want) {
		t.Fatalf("expected %d files with their patches, got %+v", len(want), d.Files)
	}
	for _, p := range d.Patches {
		if w := want[p.File.Path]; p.File != w {
			t.Errorf("expected %+v, got %+v", w, p.File)
		}
		if p.File.Large && (len(p.Lines) != 0 || p.TooLarge) {
			t.Errorf("expected %s without a patch, got %d lines", p.File.Path, len(p.Lines))
		}
	}
	if d.Additions != 3 {
		t.Errorf("expected the small file's lines only in the totals, got +%d", d.Additions)
	}
}

// Tips are the branch's head and its base's commit, read in one process, and a diff
// of given tips is of them even after the branch moved on.
func TestBranchDiffOfGivenTipsIsOfThem(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	write(t, filepath.Join(f.co.Dir, "one.txt"), "one\n")
	f.commit(t)
	tips, err := f.diffs.Tips(context.Background(), f.ws, false)
	if err != nil || tips.NoCopy || tips.BaseMissing || tips.Head != gitT(t, f.co.Dir, "rev-parse", f.ws.Branch) ||
		tips.BaseTip != gitT(t, f.upstream, "rev-parse", "main") {
		t.Fatalf("expected the branch's head and main's commit, got %+v, %v", tips, err)
	}
	write(t, filepath.Join(f.co.Dir, "two.txt"), "two\n")
	f.commit(t)
	d, err := f.diffs.Diff(context.Background(), f.ws, core.DiffQuery{Page: 1, Tips: tips})
	if err != nil || d.Head != tips.Head || len(d.Files) != 1 || d.Files[0].Path != "one.txt" {
		t.Fatalf("expected the diff of the tips given (one.txt), got %+v, %v", d, err)
	}
	other := *f.ws
	other.BaseRef = "no-such-base"
	if tips, err := f.diffs.Tips(context.Background(), &other, false); err != nil || !tips.BaseMissing {
		t.Errorf("expected the base missing, got %+v, %v", tips, err)
	}
}

// More files than a page: the pages split the list, each with its own patches.
func TestBranchDiffPagesItsFiles(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	n := core.DiffFilesPerPage*2 + 7
	for i := range n {
		write(t, filepath.Join(f.co.Dir, fmt.Sprintf("f%03d.txt", i)), fmt.Sprintf("file %d\n", i))
	}
	f.commit(t)
	d := f.diff(t, false, 3)
	if len(d.Files) != n || d.Pages != 3 || d.Page != 3 || len(d.Patches) != 7 {
		t.Fatalf("expected %d files on 3 pages, the third with 7, got %d files, page %d of %d with %d", n, len(d.Files), d.Page, d.Pages, len(d.Patches))
	}
	if p := d.Patches[0]; p.File.Path != fmt.Sprintf("f%03d.txt", 2*core.DiffFilesPerPage) || len(p.Lines) != 2 || p.Lines[1].Text != fmt.Sprintf("file %d", 2*core.DiffFilesPerPage) {
		t.Errorf("expected the third page to start at file %d, got %+v", 2*core.DiffFilesPerPage, p)
	}
}

// No copy yet, and a base that no longer resolves, are said, not failed.
func TestBranchDiffSaysWhenThereIsNothingToCompare(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	other := *f.ws
	other.ID = "ws_fedcba9876543210"
	if d, err := f.diffs.Diff(context.Background(), &other, core.DiffQuery{Page: 1}); err != nil || !d.NoCopy {
		t.Errorf("expected no copy for a workspace never checked out, got %+v, %v", d, err)
	}
	if d := f.diff(t, true, 1); !d.NoCopy {
		t.Errorf("expected no remote copy for a local workspace, got %+v", d)
	}
	gitT(t, f.co.Dir, "update-ref", "-d", "refs/remotes/origin/main")
	gitT(t, f.co.Dir, "update-ref", "-d", "refs/heads/main")
	if d := f.diff(t, false, 1); !d.BaseMissing || len(d.Files) != 0 {
		t.Errorf("expected the base missing, got %+v", d)
	}
}

// A checkout whose .git sends git elsewhere is refused, not read.
func TestBranchDiffRefusesACheckoutThatPointsElsewhere(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	if err := os.Symlink("/etc", filepath.Join(f.co.Dir, ".git", "refs", "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.diffs.Diff(context.Background(), f.ws, core.DiffQuery{Page: 1}); err == nil || !strings.Contains(err.Error(), "unsafe") {
		t.Errorf("expected the checkout refused as unsafe, got %v", err)
	}
}

// A remote workspace's branch is read from the hub's bare copy, against the base
// recorded when the copy was made, after a turn's commits came back as a bundle.
func TestBranchDiffReadsARemoteWorkspacesCopy(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	ctx := context.Background()
	b := &WorkspaceBranches{Dir: f.diffs.Branches}
	ws := *f.ws
	ws.ID, ws.ProviderID = "ws_aaaabbbbccccdddd", "process"
	f.ws = &ws
	bundle := filepath.Join(f.base, "checkout.bundle")
	out, err := os.Create(bundle)
	if err != nil {
		t.Fatal(err)
	}
	head, err := b.Bundle(ctx, &ws, &core.Project{MirrorPath: f.mirror}, out)
	out.Close()
	if err != nil {
		t.Fatal(err)
	}
	// main moves on upstream: the diff still compares with where the branch started.
	gitT(t, f.upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "later")
	co := &Checkout{Dir: filepath.Join(f.base, "machine", "checkout")}
	if err := co.CreateFromBundle(ctx, bundle, ws.Branch); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(co.Dir, "hello.txt"), "hello\n")
	if ok, err := co.CommitAll(ctx, ws.Branch, "turn"); !ok || err != nil {
		t.Fatalf("commit: %v %v", ok, err)
	}
	up := filepath.Join(f.base, "up.bundle")
	if made, err := co.BundleSince(ctx, ws.Branch, head, up); !made || err != nil {
		t.Fatalf("bundle since: %v %v", made, err)
	}
	r, err := os.Open(up)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := b.Import(ctx, &ws, &core.Project{}, r); err != nil {
		t.Fatalf("import: %v", err)
	}
	d := f.diff(t, true, 1)
	if d.Base != head || len(d.Files) != 1 || d.Files[0] != (core.DiffFile{Path: "hello.txt", Status: core.FileAdded, Additions: 1}) {
		t.Fatalf("expected hello.txt added since %s, got base %s, files %+v", head, d.Base, d.Files)
	}
	if l := d.Patches[0].Lines; len(l) != 2 || l[1].Text != "hello" || l[1].Kind != core.LineAdd {
		t.Errorf("expected hello.txt's one added line, got %+v", l)
	}
}

// The branch's commits since its base: the newest named, newest first, all counted;
// the summary (page 0) reads no patch; and a repository configured to check
// signatures runs no program of its config.
func TestBranchDiffNamesTheBranchsCommitsAndRunsNoSignatureProgram(t *testing.T) {
	f := newDiffFixture(t, map[string]string{"README.md": "# test\n"})
	marker := filepath.Join(f.base, "gpg-ran")
	gpg := filepath.Join(f.base, "gpg.sh")
	// It signs (what a signing key would), and marks that it was asked to verify.
	write(t, gpg, "#!/bin/sh\ncase \"$*\" in *--verify*) touch "+marker+"; exit 0;; esac\n"+
		"cat >/dev/null; echo '[GNUPG:] SIG_CREATED ' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\nx\\n-----END PGP SIGNATURE-----\\n'\n")
	if err := os.Chmod(gpg, 0o755); err != nil {
		t.Fatal(err)
	}
	gitT(t, f.co.Dir, "config", "log.showSignature", "true")
	gitT(t, f.co.Dir, "config", "gpg.program", gpg)
	n := core.MaxListedCommits + 2
	for i := 1; i <= n; i++ {
		write(t, filepath.Join(f.co.Dir, "n.txt"), fmt.Sprintf("%d\n", i))
		gitT(t, f.co.Dir, "add", "-A")
		gitT(t, f.co.Dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "user.signingKey=k", "-c", "commit.gpgSign=true", "commit", "-q", "-m", fmt.Sprintf("step <%d>", i))
	}
	d := f.diff(t, false, 0)
	if d.CommitCount != n || len(d.Commits) != core.MaxListedCommits {
		t.Fatalf("expected %d commits counted and %d named, got %d and %d", n, core.MaxListedCommits, d.CommitCount, len(d.Commits))
	}
	if c := d.Commits[0]; c.Subject != fmt.Sprintf("step <%d>", n) || c.Hash != gitT(t, f.co.Dir, "rev-parse", f.ws.Branch) {
		t.Errorf("expected the newest commit first, got %+v", c)
	}
	if len(d.Files) != 1 || d.Additions != 1 || len(d.Patches) != 0 {
		t.Errorf("expected one file, one addition and no patch in the summary, got %d files, +%d, %d patches", len(d.Files), d.Additions, len(d.Patches))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("expected the repository's gpg.program not run")
	}
}
