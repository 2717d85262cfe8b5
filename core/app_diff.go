package core

import (
	"context"
	"errors"
)

// The work: a workspace's branch against its base, as the hub holds it, for the app's
// diff page. The local provider's branch is its checkout on the hub's host; a remote
// provider's is the hub's copy kept by Branches. Either way the comparison is the
// branch against the merge-base of the branch and its base (`git diff base...branch`),
// so work merged into the base meanwhile is not shown as the branch's.

// BranchDiffs reads the diff of a workspace's branch. It is a port of its own, not a
// method of Machines or Branches: it reads the hub's copy wherever the provider keeps
// it (the local checkout or the remote branches' repository) and changes neither, and
// the app is its only caller.
type BranchDiffs interface {
	// Tips reads what a diff of ws's branch is of, cheaply (no file is read): the
	// branch's head and its base's commit, or that there is no copy or no base.
	Tips(ctx context.Context, ws *Workspace, remote bool) (DiffTips, error)
	// Diff compares ws's branch with its base: every changed file (at most
	// MaxDiffFiles), the branch's commits, and the patches of q.Page's files (none
	// for page 0: the summary), bounded by the limits below.
	// A missing copy or base is said in the answer (NoCopy, BaseMissing), not an error.
	// It ends when ctx does, its git processes killed.
	Diff(ctx context.Context, ws *Workspace, q DiffQuery) (*BranchDiff, error)
}

// DiffQuery says which copy to read and which page of files to show patches for.
type DiffQuery struct {
	// Remote: the copy is the remote branches' (Branches), not the local checkout.
	Remote bool
	// Page is the page of files whose patches to read, from 1; each page holds
	// DiffFilesPerPage files in the order of the list. Page 0 reads no patch: the
	// summary of the work section.
	Page int
	// Tips are the commits to compare, as Tips read them (zero: read them now).
	Tips DiffTips
}

// DiffTips are what a diff is of. The diff of the same tips is the same, so it is
// made once and kept (diffCache).
type DiffTips struct {
	// NoCopy and BaseMissing: there is nothing to compare (BranchDiff's).
	NoCopy, BaseMissing bool
	// Head is the branch's head; BaseTip the commit its base names (the diff is from
	// their merge-base).
	Head, BaseTip string
}

// The diff's bounds: a branch that changes a million files, or one file of a
// gigabyte, still makes a page of bounded size and time.
const (
	// DiffFilesPerPage is how many files' patches one page shows.
	DiffFilesPerPage = 50
	// MaxDiffFiles bounds the list of changed files; past it the list says more changed.
	MaxDiffFiles = 5000
	// MaxPatchLines and MaxPatchBytes bound one file's patch: past either it is not
	// shown ("too large to show").
	MaxPatchLines = 2000
	MaxPatchBytes = 256 << 10
	// MaxPageBytes bounds the patches of one page together: past it the page's
	// remaining files are listed without their patches.
	MaxPageBytes = 2 << 20
	// MaxListedCommits bounds the branch's commits a diff names (the newest); past it
	// CommitCount says how many more there are.
	MaxListedCommits = 20
)

// BranchCommit is one commit on the branch since its merge-base with the base.
type BranchCommit struct {
	Hash    string
	Subject string
}

// FileStatus is how a file changed on the branch.
type FileStatus string

// The statuses of a changed file.
const (
	FileAdded    FileStatus = "added"
	FileModified FileStatus = "modified"
	FileDeleted  FileStatus = "deleted"
	FileRenamed  FileStatus = "renamed"
)

// DiffFile is one changed file.
type DiffFile struct {
	Path string
	// OldPath is a renamed file's path at the base ("" otherwise).
	OldPath              string
	Status               FileStatus
	Additions, Deletions int
	// Binary files have no line counts and no patch.
	Binary bool
	// Large files are over the adapter's size bound: their versions are not read, so
	// they have no line counts and no patch either. Size is the larger version's size,
	// of a binary or large file.
	Large bool
	Size  int64
}

// LineKind is what a line of a patch is.
type LineKind string

// The kinds of a patch's lines.
const (
	LineHunk    LineKind = "hunk" // "@@ -1,3 +1,4 @@ func f()"
	LineContext LineKind = "context"
	LineAdd     LineKind = "add"
	LineDelete  LineKind = "delete"
	// LineNote is git's "\ No newline at end of file".
	LineNote LineKind = "note"
)

// DiffLine is one line of a file's patch, without its +, - or space prefix. OldLine
// and NewLine are its numbers in the base's and the branch's file (0: not there).
type DiffLine struct {
	Kind             LineKind
	Text             string
	OldLine, NewLine int
}

// FilePatch is a file of the page with its patch.
type FilePatch struct {
	File  DiffFile
	Lines []DiffLine
	// TooLarge: the patch passes MaxPatchLines or MaxPatchBytes and is not shown.
	TooLarge bool
	// Omitted: the page's patches reached MaxPageBytes before this file's.
	Omitted bool
}

// BranchDiff is the branch against its base.
type BranchDiff struct {
	Workspace *Workspace
	// NoCopy: the hub holds no copy of the branch (not checked out yet, or deleted).
	NoCopy bool
	// BaseMissing: the base no longer resolves in the hub's copy, so there is nothing
	// to compare with.
	BaseMissing bool
	// Base is the merge-base the branch is compared with, Head the branch's head.
	Base, Head string
	// Files are the changed files in git's order (by path), at most MaxDiffFiles;
	// MoreFiles says more changed.
	Files                []DiffFile
	MoreFiles            bool
	Additions, Deletions int
	// Commits are the branch's newest commits since Base, newest first, at most
	// MaxListedCommits; CommitCount counts them all.
	Commits     []BranchCommit
	CommitCount int
	// Page is the page shown, of Pages; Patches are its files with their patches.
	Page, Pages int
	Patches     []FilePatch
	// TimedOut: the diff took longer than DiffLimits.Timeout and was given up; until the
	// branch moves, the page says so instead of trying again.
	TimedOut bool
}

// errNoDiffs: the hub was built without a BranchDiffs.
var errNoDiffs = errors.New("the hub reads no branch diffs")

// Diff reads the work of the workspace's branch: its changed files against its base,
// and the patches of one page of them. A page is computed once per DiffTips and kept
// (diffCache); computing one is bounded by DiffLimits: a deadline, and so many at once
// per account.
func (s *AppWorkspaces) Diff(ctx context.Context, a *AppSession, id string, page int) (*BranchDiff, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	ws, err := s.workspaces.GetWorkspace(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	if page < 1 {
		return nil, Errorf(CodeInvalidRequest, "pages are numbered from 1")
	}
	if s.diffs == nil {
		return nil, errNoDiffs
	}
	remote := ws.ProviderID != LocalProviderID
	if remote && s.branches != nil {
		// Under the diff's deadline too: what it reads is a runtime's upload.
		sync, cancel := context.WithTimeout(ctx, s.diffLimits.timeout())
		s.syncBranch(sync, ws)
		cancel()
	}
	d, _, err := s.diffOf(ctx, ws, remote, page)
	if err != nil {
		return nil, err
	}
	if d.Pages > 0 && page > d.Pages {
		return nil, Errorf(CodeInvalidRequest, "the changes have %d pages; there is no page %d", d.Pages, page)
	}
	d.Workspace = ws
	return d, nil
}

// diffOf is the page of the branch's diff, from the cache or computed, and the tips
// it is of. The answer is the caller's own copy (the cache keeps another).
func (s *AppWorkspaces) diffOf(ctx context.Context, ws *Workspace, remote bool, page int) (*BranchDiff, DiffTips, error) {
	lim := s.diffLimits
	run, cancel := context.WithTimeout(ctx, lim.timeout())
	defer cancel()
	tips, err := s.diffs.Tips(run, ws, remote)
	if err != nil {
		return nil, tips, err
	}
	if tips.NoCopy || tips.BaseMissing {
		return &BranchDiff{NoCopy: tips.NoCopy, BaseMissing: tips.BaseMissing}, tips, nil
	}
	key := diffKey{workspace: ws.ID, remote: remote, tips: tips, page: page}
	if d := s.diffCache.get(ctx, key); d != nil {
		return d, tips, nil
	}
	release, ok := s.diffRuns.acquire(ws.AccountID)
	if !ok {
		return nil, tips, Errorf(CodeRateLimited, "The hub is already computing as many diffs for this account as it computes at once (%d). Try again in a moment.", lim.perAccount())
	}
	defer release()
	d, err := s.diffs.Diff(run, ws, DiffQuery{Remote: remote, Page: page, Tips: tips})
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, tips, ctx.Err() // the person went away: nothing to keep
	case err != nil && run.Err() != nil:
		// Kept like a diff: the same tips would take as long again.
		d = &BranchDiff{Head: tips.Head, Page: page, TimedOut: true}
	case err != nil:
		return nil, tips, err
	}
	s.diffCache.put(ctx, key, d)
	return d, tips, nil
}

// syncBranch brings this hub's cache of a remote workspace's branch up to the shared
// copy before the diff reads it. Fail open: the page shows the cache as it is (or that
// there is none yet), and the log says why.
func (s *AppWorkspaces) syncBranch(ctx context.Context, ws *Workspace) {
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	if err == nil {
		if err = s.forHub(ctx, p, s.mirror); err == nil {
			err = s.branches.Sync(ctx, ws, p)
		}
	}
	if err != nil && ctx.Err() == nil {
		s.log().Warn("bring the branch's cache up to date for its diff", "workspace", ws.ID, "err", err)
	}
}
