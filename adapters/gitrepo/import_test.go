package gitrepo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// importFixture is a remote workspace as the hub holds it (its branch repository, made
// from a project mirror) and the machine's checkout of it, with a second workspace of
// another project beside it whose branch holds a secret commit.
type importFixture struct {
	b            *WorkspaceBranches
	ws, victim   *core.Workspace
	machine      string // the runtime's checkout
	head         string // the branch head the hub holds
	victimMirror string
	secret       string // the victim's commit
}

func newImportFixture(t *testing.T) *importFixture {
	t.Helper()
	requireGit(t)
	ctx := context.Background()
	base := t.TempDir()
	f := &importFixture{b: &WorkspaceBranches{Dir: filepath.Join(base, "branches")}}
	mirrors := &Mirror{Dir: filepath.Join(base, "mirrors")}
	mine, _, err := mirrors.Mirror(ctx, proj("prj_mine", newSource(t, "main", 1)))
	if err != nil {
		t.Fatal(err)
	}
	theirs := newSource(t, "main", 1)
	gitT(t, theirs, "-c", "user.name=v", "-c", "user.email=v@v", "commit", "-q", "--allow-empty", "-m", "the victim's secret")
	if f.victimMirror, _, err = mirrors.Mirror(ctx, proj("prj_theirs", theirs)); err != nil {
		t.Fatal(err)
	}
	f.secret = gitT(t, theirs, "rev-parse", "HEAD")
	// The attacker's workspace is on a branch of the victim's name: a fetch from the
	// victim's repository would find it.
	f.ws = &core.Workspace{ID: "ws_aaaaaaaaaaaaaaaa", Branch: "main", BaseRef: "main"}
	f.victim = &core.Workspace{ID: "ws_bbbbbbbbbbbbbbbb", Branch: "main", BaseRef: "main"}
	if _, err := f.b.Bundle(ctx, f.victim, &core.Project{MirrorPath: f.victimMirror}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(base, "checkout.bundle")
	out, err := os.Create(bundle)
	if err != nil {
		t.Fatal(err)
	}
	f.head, err = f.b.Bundle(ctx, f.ws, &core.Project{MirrorPath: mine}, out)
	out.Close()
	if err != nil {
		t.Fatal(err)
	}
	co := &Checkout{Dir: filepath.Join(base, "machine", "checkout")}
	if err := co.CreateFromBundle(ctx, bundle, f.ws.Branch); err != nil {
		t.Fatal(err)
	}
	f.machine = co.Dir
	return f
}

// repo is the hub's repository of the attacker's workspace.
func (f *importFixture) repo() string { return filepath.Join(f.b.Dir, f.ws.ID+".git") }

// upload imports body and returns the error.
func (f *importFixture) upload(t *testing.T, body []byte) (string, error) {
	t.Helper()
	return f.b.Import(context.Background(), f.ws, &core.Project{}, bytes.NewReader(body))
}

// bundleOf bundles the machine's branch since the hub's head.
func (f *importFixture) bundleOf(t *testing.T, tip string) []byte {
	t.Helper()
	gitT(t, f.machine, "update-ref", "refs/heads/"+f.ws.Branch, tip)
	path := filepath.Join(t.TempDir(), "up.bundle")
	gitT(t, f.machine, "bundle", "create", "-q", path, "refs/heads/"+f.ws.Branch, "^"+f.head)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// objectFiles lists the files under the hub repository's objects, to see that a
// refused upload left nothing.
func (f *importFixture) objectFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(f.repo(), "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// expectRefused checks that err is a refusal with code, that its words for the runtime
// name none of the hub's paths, and that the branch and the objects are as before.
func (f *importFixture) expectRefused(t *testing.T, err error, code string, before []string) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("expected %s, got %v", code, err)
	}
	if strings.Contains(ce.Detail, f.b.Dir) || strings.Contains(ce.Detail, "/") && !strings.Contains(ce.Detail, "refs/heads/") {
		t.Fatalf("expected a fixed sentence for the runtime, got %q", ce.Detail)
	}
	if got := gitT(t, f.repo(), "rev-parse", "refs/heads/"+f.ws.Branch); got != f.head {
		t.Fatalf("expected the branch to stay at %s, got %s", f.head, got)
	}
	if after := f.objectFiles(t); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("expected a refused upload to leave nothing: before %d files, after %d: %q", len(before), len(after), after)
	}
}

func TestImportRefusesAnUploadThatIsNotABundle(t *testing.T) {
	f := newImportFixture(t)
	before := f.objectFiles(t)
	for name, body := range map[string]string{
		"the victim's mirror, relative":    "gitdir: ../mirrors/prj_theirs.git\n",
		"the victim's mirror, absolute":    "gitdir: " + f.victimMirror + "\n",
		"another workspace's repository":   "gitdir: " + filepath.Join(f.b.Dir, f.victim.ID+".git") + "\n",
		"a bundle signature of no version": "# v9 git bundle\n" + f.secret + " refs/heads/main\n\n",
		"a filtered v3 bundle":             "# v3 git bundle\n@filter=blob:none\n" + f.secret + " refs/heads/main\n\nPACK",
		"no pack after the header":         "# v2 git bundle\n" + f.secret + " refs/heads/main\n\nnot a pack",
		"empty":                            "",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.upload(t, []byte(body))
			f.expectRefused(t, err, core.CodeCommitsRefused, before)
			if out, err := exec.Command("git", "-C", f.repo(), "cat-file", "-e", f.secret).CombinedOutput(); err == nil {
				t.Fatalf("expected the victim's commit not to reach the workspace's repository: %s", out)
			}
		})
	}
}

// commitWith makes, in the machine's checkout, a commit on the hub's head whose tree
// is the raw tree given (entries made with treeEntry), bypassing git's own checks as
// an agent can.
func (f *importFixture) commitWith(t *testing.T, tree []byte, committer string) string {
	t.Helper()
	treeID := hashObject(t, f.machine, "tree", tree)
	commit := fmt.Sprintf("tree %s\nparent %s\nauthor a <a@a> 1700000000 +0000\ncommitter %s\n\nturn\n", treeID, f.head, committer)
	return hashObject(t, f.machine, "commit", []byte(commit))
}

func hashObject(t *testing.T, dir, typ string, body []byte) string {
	t.Helper()
	cmd := exec.Command("git", "-C", dir, "hash-object", "-w", "--literally", "-t", typ, "--stdin")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hash-object: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// treeEntry is one raw tree entry.
func treeEntry(t *testing.T, mode, name, id string) []byte {
	t.Helper()
	raw, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(mode+" "+name+"\x00"), raw...)
}

// Each of these was taken and pushed to the project's repository before the hub
// indexed uploads with full fsck.
func TestImportRefusesObjectsThatFailFsck(t *testing.T) {
	f := newImportFixture(t)
	before := f.objectFiles(t)
	blob := func(s string) string { return hashObject(t, f.machine, "blob", []byte(s)) }
	tree := func(entries ...[]byte) []byte { return bytes.Join(entries, nil) }
	ok := "c <c@c> 1700000000 +0000"
	config := blob("[core]\n\tfsmonitor = touch /tmp/pwned\n")
	dotgit := hashObject(t, f.machine, "tree", treeEntry(t, "100644", "config", config))
	modules := blob("[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch${IFS}/tmp/pwned\n")
	target := blob("elsewhere")
	file := blob("same\n")
	cases := []struct{ name, tip string }{
		{".git/config in a tree", f.commitWith(t, tree(treeEntry(t, "40000", ".git", dotgit)), ok)},
		{"a .gitmodules url that is an option", f.commitWith(t, tree(treeEntry(t, "100644", ".gitmodules", modules)), ok)},
		{"a symlinked .gitmodules", f.commitWith(t, tree(treeEntry(t, "120000", ".gitmodules", target)), ok)},
		{"duplicate entries", f.commitWith(t, tree(treeEntry(t, "100644", "a", file), treeEntry(t, "100644", "a", file)), ok)},
		{"a bad timezone", f.commitWith(t, tree(treeEntry(t, "100644", "a", file)), "c <c@c> 1700000000 +99999")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.upload(t, f.bundleOf(t, c.tip))
			t.Logf("refused: %v", err)
			f.expectRefused(t, err, core.CodeCommitsRefused, before)
		})
	}
}

// A small bundle that inflates to a large file is refused from the sizes its pack
// declares, before git inflates it; what a workspace's uploads add up to is bounded
// on disk.
func TestImportBoundsObjectAndBranchSizes(t *testing.T) {
	f := newImportFixture(t)
	f.b.MaxObjectBytes, f.b.MaxBranchBytes = 1<<20, 96<<10
	before := f.objectFiles(t)
	commitFile := func(name string, content []byte) string {
		path := filepath.Join(f.machine, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		gitT(t, f.machine, "add", name)
		gitT(t, f.machine, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", name)
		return gitT(t, f.machine, "rev-parse", "HEAD")
	}
	bomb := f.bundleOf(t, commitFile("zeros", make([]byte, 8<<20)))
	if len(bomb) > 64<<10 {
		t.Fatalf("expected the 8 MiB file to compress to a small bundle, got %d bytes", len(bomb))
	}
	_, err := f.upload(t, bomb)
	f.expectRefused(t, err, core.CodeCommitsTooLarge, before)

	gitT(t, f.machine, "reset", "-q", "--hard", f.head)
	random := func() []byte {
		b := make([]byte, 60<<10)
		_, _ = rand.Read(b)
		return b
	}
	first := commitFile("one", random())
	head, err := f.upload(t, f.bundleOf(t, first))
	if err != nil || head != first {
		t.Fatalf("expected 60 KiB taken, got %q, %v", head, err)
	}
	f.head = head
	taken := f.objectFiles(t)
	second := commitFile("two", random())
	_, err = f.upload(t, f.bundleOf(t, second))
	f.expectRefused(t, err, core.CodeCommitsTooLarge, taken)
}

// The bundle's branch must build on the hub's head, from commits of the branch.
func TestImportTakesOnlyTheBranchMovingForward(t *testing.T) {
	f := newImportFixture(t)
	before := f.objectFiles(t)
	file := hashObject(t, f.machine, "blob", []byte("x\n"))
	tree := hashObject(t, f.machine, "tree", treeEntry(t, "100644", "x", file))
	root := hashObject(t, f.machine, "commit", []byte("tree "+tree+"\nauthor a <a@a> 1700000000 +0000\ncommitter a <a@a> 1700000000 +0000\n\nroot\n"))
	gitT(t, f.machine, "update-ref", "refs/heads/"+f.ws.Branch, root)
	path := filepath.Join(t.TempDir(), "root.bundle")
	gitT(t, f.machine, "bundle", "create", "-q", path, "refs/heads/"+f.ws.Branch)
	body, _ := os.ReadFile(path)
	_, err := f.upload(t, body)
	f.expectRefused(t, err, core.CodeCommitsRefused, before)

	// Another branch's name in the bundle.
	next := hashObject(t, f.machine, "commit", []byte("tree "+tree+"\nparent "+f.head+"\nauthor a <a@a> 1700000000 +0000\ncommitter a <a@a> 1700000000 +0000\n\nnext\n"))
	gitT(t, f.machine, "update-ref", "refs/heads/other", next)
	gitT(t, f.machine, "bundle", "create", "-q", path, "refs/heads/other", "^"+f.head)
	body, _ = os.ReadFile(path)
	_, err = f.upload(t, body)
	f.expectRefused(t, err, core.CodeCommitsRefused, before)
}

func TestImportOfOneWorkspaceAtATime(t *testing.T) {
	f := newImportFixture(t)
	unlock, err := lockImport(f.repo())
	if err != nil {
		t.Fatal(err)
	}
	gitT(t, f.machine, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "turn")
	tip := gitT(t, f.machine, "rev-parse", "HEAD")
	body := f.bundleOf(t, tip)
	_, err = f.upload(t, body)
	f.expectRefused(t, err, core.CodeImportInProgress, f.objectFiles(t))
	unlock()
	if head, err := f.upload(t, body); err != nil || head != tip {
		t.Fatalf("expected the upload taken once the other was done, got %q, %v", head, err)
	}
	// The same upload again (its answer was lost) changes nothing.
	if head, err := f.upload(t, body); err != nil || head != tip {
		t.Fatalf("expected the repeated upload to answer the same head, got %q, %v", head, err)
	}
}

// The header and pack readers take any bytes without panicking, and a pack they pass
// stays within its limits.
func FuzzBundleReaders(f *testing.F) {
	f.Add([]byte("# v2 git bundle\n" + strings.Repeat("a", 40) + " refs/heads/main\n\nPACK\x00\x00\x00\x02\x00\x00\x00\x00"))
	f.Add([]byte("# v3 git bundle\n@object-format=sha256\n-" + strings.Repeat("b", 64) + " x\n" + strings.Repeat("c", 64) + " refs/heads/x\n\n"))
	f.Add([]byte("gitdir: ../x.git\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readBundleHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		if h.packOffset > int64(len(data)) || len(h.refs) == 0 {
			t.Fatalf("header read past its input or with no ref: %+v", h)
		}
		_ = scanPack(bytes.NewReader(data[h.packOffset:]), h.hexLen/2, packLimits{maxObject: 1 << 20, maxTotal: 4 << 20, maxObjects: 1000})
	})
}
