package gitrepo

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wshub/wshub/core"
)

// BranchDiffs reads workspaces' branches against their bases for the app
// (core.BranchDiffs), from the hub's copy: a local workspace's checkout
// (<Checkouts>/<id>/checkout, machines.LocalMachines' layout) or a remote one's bare
// repository (<Branches>/<id>.git, WorkspaceBranches'). It only reads them.
//
// A local checkout's .git is the agent's to write, and a turn may be running while a
// member reads the page, so the hub cannot put it back as its commits do (secure):
// that would change the agent's repository under it. Instead it refuses a .git shaped
// to send git elsewhere (a symlink in it, commondir, alternates), and runs git so that
// nothing in the repository's config runs a program: hooks and fsmonitor off
// (safeConfig), no transport at all (protocol.allow=never, no lazy fetch of a
// promisor's missing objects), no external diff or textconv driver, and only
// commit-to-commit comparisons, which never read the working tree (no filters). What
// a racing agent could still do, swapping a directory between the check and git's
// run, makes git read, never write, where it points.
type BranchDiffs struct {
	Checkouts string
	Branches  string
	Git       string // default "git"
	// LargeFile is the size (bytes) past which git does not read a file's versions to
	// count or show its lines (0: DefaultLargeFile): the list says how large it is
	// instead. Counting lines costs what reading the file costs, and an upload of a
	// few compressed megabytes can hold a gigabyte of text.
	LargeFile int64
	// Confine, when set, holds each diff's git processes in bounds of their own (a
	// cgroup): the branch is the agent's or a runtime's work, and git's cost is its.
	Confine Confiner
}

// DefaultLargeFile is BranchDiffs.LargeFile's default: four times a patch the page
// would show (core.MaxPatchBytes), so every file with a patch to show has its lines.
const DefaultLargeFile = 4 * core.MaxPatchBytes

var _ core.BranchDiffs = (*BranchDiffs)(nil)

// diffConfig is the configuration of every diff command, after safeConfig: what the
// parser reads is git's plain format, whatever the repository's config says.
var diffConfig = []string{
	"-c", "protocol.allow=never",
	"-c", "core.quotePath=false",
	"-c", "color.ui=false",
	"-c", "diff.noprefix=false",
	"-c", "diff.mnemonicPrefix=false",
	"-c", "diff.suppressBlankEmpty=false",
	"-c", "diff.relative=false",
	"-c", "diff.renames=true",
}

// diffFlags come after "diff" on every diff command.
var diffFlags = []string{"--no-color", "--no-ext-diff", "--no-textconv", "-M", "--ignore-submodules=none"}

// The output bounds of git's answers: the list's, and a file's patch beside its
// header lines (paths, modes, blob ids).
const (
	maxListBytes   = 8 << 20
	patchHeadBytes = 16 << 10
)

// repo is one workspace's copy to read: git with GIT_DIR set.
type repo struct {
	g   *runner
	env []string
	// conf is diffConfig with the large-file bound.
	conf []string
	// large is the bound itself.
	large int64
}

func (d *BranchDiffs) open(ws *core.Workspace, remote bool) (*repo, error) {
	if !core.ValidID(ws.ID, core.PrefixWorkspace) {
		return nil, fmt.Errorf("workspace id %q is not an id", ws.ID)
	}
	var gitDir, root string
	if remote {
		root = d.Branches
		gitDir = filepath.Join(d.Branches, ws.ID+".git")
	} else {
		root = d.Checkouts
		gitDir = filepath.Join(d.Checkouts, ws.ID, "checkout", ".git")
	}
	if _, err := os.Lstat(gitDir); err != nil {
		return nil, err
	}
	if !remote { // the remote copy is the hub's own: only uploads' checked objects reach it
		if err := readable(gitDir); err != nil {
			return nil, err
		}
	}
	g := &runner{prog: cmp.Or(d.Git, "git"), redact: redactor{dir: root}}
	large := cmp.Or(d.LargeFile, DefaultLargeFile)
	// Past core.bigFileThreshold git takes a file for binary from its size alone: its
	// versions are not read, so no count or patch of it costs anything.
	conf := append(slices.Clone(diffConfig), "-c", "core.bigFileThreshold="+strconv.FormatInt(large, 10))
	return &repo{g: g, conf: conf, large: large,
		env: []string{"GIT_DIR=" + gitDir, "GIT_NO_LAZY_FETCH=1", "GIT_LITERAL_PATHSPECS=1", "GIT_OPTIONAL_LOCKS=0"}}, nil
}

// readable checks, without changing anything, that a checkout's .git is a directory
// whose git reads only what is inside it (see secure, which also repairs it).
func readable(gitDir string) error {
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: .git is not a directory", ErrUnsafeRepository)
	}
	for _, name := range []string{"commondir", filepath.Join("objects", "info", "alternates"), filepath.Join("objects", "info", "http-alternates")} {
		if _, err := os.Lstat(filepath.Join(gitDir, name)); err == nil {
			return fmt.Errorf("%w: it has %s", ErrUnsafeRepository, name)
		}
	}
	return filepath.WalkDir(gitDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symlink", ErrUnsafeRepository, filepath.Base(path))
		}
		return nil
	})
}

func (r *repo) run(ctx context.Context, args ...string) (string, error) {
	return r.runInput(ctx, "", args...)
}

// runInput is run with input on git's standard input.
func (r *repo) runInput(ctx context.Context, input string, args ...string) (string, error) {
	var stdin io.Reader
	if input != "" {
		stdin = strings.NewReader(input)
	}
	return r.g.runWith(ctx, "", stdin, r.env, append(slices.Clone(r.conf), args...)...)
}

// capped runs git keeping at most limit bytes of its output; full is false when git
// said more (and was stopped).
func (r *repo) capped(ctx context.Context, limit int, args ...string) (out []byte, full bool, err error) {
	w := &cappedWriter{limit: limit}
	err = r.g.runTo(ctx, "", nil, w, r.env, append(slices.Clone(r.conf), args...)...)
	if w.over {
		return w.buf.Bytes(), false, nil // git died of the closed pipe: what it said is enough
	}
	return w.buf.Bytes(), true, err
}

// cappedWriter keeps the first limit bytes written to it, then refuses, which closes
// git's standard output and ends it.
type cappedWriter struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

var errCapped = errors.New("output over its bound")

func (w *cappedWriter) Write(p []byte) (int, error) {
	if room := w.limit - w.buf.Len(); len(p) > room {
		w.buf.Write(p[:max(room, 0)])
		w.over = true
		return max(room, 0), errCapped
	}
	return w.buf.Write(p)
}

// objects asks git about each of names (revisions or object ids), in one process:
// the format's answer for each, "" for a name that names nothing. A name with a line
// break in it (git's refs cannot have one) is not asked.
func (r *repo) objects(ctx context.Context, format string, names []string) ([]string, error) {
	var in strings.Builder
	asked := make([]bool, len(names))
	for i, n := range names {
		if n != "" && !strings.ContainsAny(n, "\n\r") {
			in.WriteString(n + "\n")
			asked[i] = true
		}
	}
	out := make([]string, len(names))
	if in.Len() == 0 {
		return out, nil
	}
	// A name git does not know is answered "<name> missing" (or "ambiguous"); the format
	// leads with the object id, so an answer that does not, or says so, is none.
	said, err := r.runInput(ctx, in.String(), "cat-file", "--batch-check=%(objectname) "+format)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(said, "\n"), "\n")
	for i := range names {
		if !asked[i] {
			continue
		}
		if len(lines) == 0 {
			return nil, fmt.Errorf("cat-file answered %d names of %d", i, len(names))
		}
		id, rest, _ := strings.Cut(lines[0], " ")
		lines = lines[1:]
		if isObjectID(id) && rest != "missing" && rest != "ambiguous" && !strings.Contains(rest, " ") {
			out[i] = rest
		}
	}
	return out, nil
}

// isObjectID: s is a full object id (SHA-1 or SHA-256), in hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// tips reads the branch's head and the commit its base names, in one git process.
func (r *repo) tips(ctx context.Context, ws *core.Workspace, remote bool) (core.DiffTips, error) {
	revs := append([]string{"refs/heads/" + ws.Branch}, baseRevs(ws, remote)...)
	names := make([]string, len(revs))
	for i, rev := range revs {
		names[i] = rev + "^{commit}"
	}
	said, err := r.objects(ctx, "%(objectname)", names)
	if err != nil {
		return core.DiffTips{}, err
	}
	t := core.DiffTips{Head: said[0]}
	if t.Head == "" {
		return core.DiffTips{NoCopy: true}, nil
	}
	for _, c := range said[1:] {
		if c != "" {
			t.BaseTip = c
			break
		}
	}
	t.BaseMissing = t.BaseTip == ""
	return t, nil
}

// Tips reads what a diff of ws's branch would be of: its head and its base's commit,
// with one git process, so that a diff already made of them is found for the cost of
// one small read.
func (d *BranchDiffs) Tips(ctx context.Context, ws *core.Workspace, remote bool) (core.DiffTips, error) {
	r, err := d.open(ws, remote)
	if errors.Is(err, fs.ErrNotExist) {
		return core.DiffTips{NoCopy: true}, nil
	}
	if err != nil {
		return core.DiffTips{}, err
	}
	return r.tips(ctx, ws, remote)
}

// baseRevs are where a workspace's base is found, first to last. The checkout was
// cloned from the mirror when the branch was made and is never fetched again, so its
// origin's branch is the base as it was then. The remote copy keeps only the branch
// and refs/wshub/base, recorded when it was made (workspace_branches.go); a copy made
// before that knows its base only when baseRef is a commit id.
func baseRevs(ws *core.Workspace, remote bool) []string {
	if remote {
		return []string{baseRefName, ws.BaseRef}
	}
	return []string{"refs/remotes/origin/" + ws.BaseRef, "refs/tags/" + ws.BaseRef, ws.BaseRef}
}

// Diff compares ws's branch with the merge-base of the branch and its base: q.Tips
// when they are given (the diff is of them even if the branch moved since), else
// the tips as they are now.
func (d *BranchDiffs) Diff(ctx context.Context, ws *core.Workspace, q core.DiffQuery) (_ *core.BranchDiff, err error) {
	r, err := d.open(ws, q.Remote)
	if errors.Is(err, fs.ErrNotExist) {
		return &core.BranchDiff{NoCopy: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if d.Confine != nil {
		// Fail closed: a diff the hub cannot bound is not made.
		wrap, release, err := d.Confine.Confine("the diff of " + ws.ID)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, release()) }()
		r.g.wrap = wrap
	}
	tips := q.Tips
	if tips == (core.DiffTips{}) {
		if tips, err = r.tips(ctx, ws, q.Remote); err != nil {
			return nil, err
		}
	}
	out := &core.BranchDiff{NoCopy: tips.NoCopy, BaseMissing: tips.BaseMissing, Head: tips.Head}
	if tips.NoCopy || tips.BaseMissing {
		return out, nil
	}
	mb, err := r.run(ctx, "merge-base", tips.BaseTip, tips.Head)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 { // no common history
		out.BaseMissing = true
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	out.Base = strings.TrimSpace(mb)
	if out.Files, out.MoreFiles, err = r.files(ctx, out.Base, out.Head); err != nil {
		return nil, err
	}
	for _, f := range out.Files {
		out.Additions += f.Additions
		out.Deletions += f.Deletions
	}
	if out.Commits, out.CommitCount, err = r.commits(ctx, out.Base, out.Head); err != nil {
		return nil, err
	}
	out.Pages = max(1, (len(out.Files)+core.DiffFilesPerPage-1)/core.DiffFilesPerPage)
	out.Page = q.Page
	if q.Page < 1 || q.Page > out.Pages {
		return out, nil // core says there is no such page
	}
	first := (q.Page - 1) * core.DiffFilesPerPage
	page := out.Files[first:min(len(out.Files), first+core.DiffFilesPerPage)]
	out.Patches, err = r.patches(ctx, out.Base, out.Head, page)
	return out, err
}

// commits reads the branch's newest commits since base (at most
// core.MaxListedCommits, newest first) and how many there are. No signature is
// checked: that would run the program the repository's config names.
func (r *repo) commits(ctx context.Context, base, head string) ([]core.BranchCommit, int, error) {
	span := base + ".." + head
	n, err := r.run(ctx, "rev-list", "--count", span, "--")
	if err != nil {
		return nil, 0, err
	}
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return nil, 0, fmt.Errorf("rev-list counted %q", n)
	}
	said, err := r.run(ctx, "-c", "log.showSignature=false", "log", "--no-show-signature", "--no-mailmap", "--no-decorate",
		"--no-color", "--format=%H %s", "--max-count="+strconv.Itoa(core.MaxListedCommits), span, "--")
	if err != nil {
		return nil, 0, err
	}
	var out []core.BranchCommit
	for line := range strings.Lines(said) {
		hash, subject, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		if isObjectID(hash) {
			out = append(out, core.BranchCommit{Hash: hash, Subject: valid(subject)})
		}
	}
	return out, count, nil
}

// files lists the changed files: their statuses and blob ids (--raw) beside their
// counts (--numstat), both -z (paths as they are, any byte but NUL) and in git's one
// order. A file git took for binary is looked at once more, by its blobs' sizes: past
// the large-file bound it is a large file, not a binary one.
func (r *repo) files(ctx context.Context, base, head string) ([]core.DiffFile, bool, error) {
	raw, fullS, err := r.capped(ctx, maxListBytes, append(append([]string{"diff"}, diffFlags...), "--raw", "--no-abbrev", "-z", base, head, "--")...)
	if err != nil {
		return nil, false, err
	}
	counts, fullC, err := r.capped(ctx, maxListBytes, append(append([]string{"diff"}, diffFlags...), "--numstat", "-z", base, head, "--")...)
	if err != nil {
		return nil, false, err
	}
	files, blobs := parseRaw(raw, fullS)
	numbers := parseNumstat(counts, fullC)
	n := min(len(files), len(numbers))
	more := !fullS || !fullC || len(files) != len(numbers)
	if n > core.MaxDiffFiles {
		n, more = core.MaxDiffFiles, true
	}
	files = files[:n]
	var ids []string
	for i := range files {
		nf := numbers[i]
		if nf.Path != files[i].Path { // both lists are git's one order; a mismatch is a bug to see, not hide
			return nil, false, fmt.Errorf("diff lists disagree at %d: %q and %q", i, files[i].Path, nf.Path)
		}
		files[i].Additions, files[i].Deletions, files[i].Binary = nf.Additions, nf.Deletions, nf.Binary
		if nf.Binary {
			for _, id := range blobs[i] {
				if strings.Trim(id, "0") == "" {
					id = "" // the side that has no file
				}
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return files, more, nil
	}
	sizes, err := r.objects(ctx, "%(objectsize)", ids)
	if err != nil {
		return nil, false, err
	}
	for i := range files {
		if !files[i].Binary {
			continue
		}
		for _, s := range sizes[:2] {
			n, _ := strconv.ParseInt(s, 10, 64)
			files[i].Size = max(files[i].Size, n)
		}
		sizes = sizes[2:]
		if files[i].Size > r.large {
			files[i].Binary, files[i].Large = false, true
		}
	}
	return files, more, nil
}

// parseRaw reads --raw --no-abbrev -z: ":100644 100644 <old> <new> M\0path\0",
// ":... R086\0old\0new\0", beside each file its old and new blob ids (all zeros
// where that side has none). A record cut by the output's bound (full false) is
// dropped.
func parseRaw(b []byte, full bool) ([]core.DiffFile, [][2]string) {
	f := fields(b, full)
	var out []core.DiffFile
	var blobs [][2]string
	for i := 0; i < len(f); {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) != 5 {
			break
		}
		st := meta[4]
		paths := 1
		if st[0] == 'R' || st[0] == 'C' {
			paths = 2
		}
		if i+paths >= len(f) {
			break
		}
		file := core.DiffFile{Path: f[i+paths]}
		switch st[0] {
		case 'A', 'C':
			file.Status = core.FileAdded
		case 'D':
			file.Status = core.FileDeleted
		case 'R':
			file.Status, file.OldPath = core.FileRenamed, f[i+1]
		default: // M, T (a type change), U
			file.Status = core.FileModified
		}
		out = append(out, file)
		blobs = append(blobs, [2]string{meta[2], meta[3]})
		i += 1 + paths
	}
	return out, blobs
}

// parseNumstat reads --numstat -z: "1\t2\tpath\0", a rename "1\t2\t\0old\0new\0", a
// binary file "-\t-\tpath\0".
func parseNumstat(b []byte, full bool) []core.DiffFile {
	f := fields(b, full)
	var out []core.DiffFile
	for i := 0; i < len(f); {
		parts := strings.SplitN(f[i], "\t", 3)
		if len(parts) != 3 {
			break
		}
		file := core.DiffFile{Path: parts[2]}
		if parts[0] == "-" && parts[1] == "-" {
			file.Binary = true
		} else {
			file.Additions, _ = strconv.Atoi(parts[0])
			file.Deletions, _ = strconv.Atoi(parts[1])
		}
		i++
		if parts[2] == "" { // a rename: the old path, then the new
			if i+1 >= len(f) {
				break
			}
			file.Path = f[i+1]
			i += 2
		}
		out = append(out, file)
	}
	return out
}

// fields splits NUL-terminated fields, dropping the last when the output was cut.
func fields(b []byte, full bool) []string {
	if !full {
		if i := bytes.LastIndexByte(b, 0); i >= 0 {
			b = b[:i+1]
		} else {
			b = nil
		}
	}
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// patches reads each file's patch, one git diff per file limited to its paths, each
// bounded by MaxPatchBytes and the page's by MaxPageBytes.
func (r *repo) patches(ctx context.Context, base, head string, files []core.DiffFile) ([]core.FilePatch, error) {
	out := make([]core.FilePatch, 0, len(files))
	total, spent := 0, false
	for _, f := range files {
		p := core.FilePatch{File: f}
		switch {
		case f.Binary, f.Large:
		case spent:
			p.Omitted = true
		case f.Additions+f.Deletions > core.MaxPatchLines:
			p.TooLarge = true
		default:
			args := append(append([]string{"diff"}, diffFlags...), "-U3", base, head, "--")
			if f.OldPath != "" {
				args = append(args, f.OldPath)
			}
			b, full, err := r.capped(ctx, core.MaxPatchBytes+patchHeadBytes, append(args, f.Path)...)
			if err != nil {
				return nil, err
			}
			if total+len(b) > core.MaxPageBytes {
				p.Omitted, spent = true, true
				break
			}
			lines, fits := parsePatch(b)
			if !full || !fits {
				p.TooLarge = true
				break
			}
			total += len(b)
			p.Lines = lines
		}
		out = append(out, p)
	}
	return out, nil
}

// parsePatch reads a file's patch: header lines up to the first hunk are skipped (the
// list has the paths and modes); then each line is a hunk header, context, addition,
// deletion, or git's note. fits is false past MaxPatchLines or MaxPatchBytes of lines.
func parsePatch(b []byte) (lines []core.DiffLine, fits bool) {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil, true
	}
	inHunk, oldN, newN, size := false, 0, 0, 0
	for l := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(l, "diff --git ") {
			inHunk = false // another file's header (a rename git did not pair here)
			continue
		}
		if strings.HasPrefix(l, "@@") {
			inHunk = true
			oldN, newN = hunkStarts(l)
			lines = append(lines, core.DiffLine{Kind: core.LineHunk, Text: valid(l)})
			continue
		}
		if !inHunk {
			continue
		}
		size += len(l)
		if len(lines) >= core.MaxPatchLines || size > core.MaxPatchBytes {
			return nil, false
		}
		line := core.DiffLine{}
		prefix, text := byte(' '), l
		if l != "" {
			prefix, text = l[0], l[1:]
		}
		switch prefix {
		case '+':
			line.Kind, line.NewLine = core.LineAdd, newN
			newN++
		case '-':
			line.Kind, line.OldLine = core.LineDelete, oldN
			oldN++
		case '\\':
			line.Kind, text = core.LineNote, l
		default:
			line.Kind, line.OldLine, line.NewLine = core.LineContext, oldN, newN
			oldN++
			newN++
		}
		line.Text = valid(text)
		lines = append(lines, line)
	}
	return lines, true
}

// hunkStarts reads the first old and new line numbers of "@@ -a,b +c,d @@".
func hunkStarts(h string) (oldN, newN int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s, _, _ = strings.Cut(s[1:], ",")
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(f[1]), num(f[2])
}

// valid makes a line of a file that is not UTF-8 showable.
func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
