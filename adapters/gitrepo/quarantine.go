package gitrepo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/nofollow"
)

// quarantine is a directory of objects beside a repository's own, as git's
// receive-pack keeps a push's objects until it is accepted: git writes an upload's
// pack there (GIT_OBJECT_DIRECTORY) while reading the repository's objects as an
// alternate, and the pack joins the repository only when the update is taken.
type quarantine struct{ dir string }

func newQuarantine(repo string) (*quarantine, error) {
	dir, err := os.MkdirTemp(filepath.Join(repo, "objects"), "incoming-")
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "pack"), 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &quarantine{dir: dir}, nil
}

// env points git's object writes at the quarantine, its reads at both.
func (q *quarantine) env(repo string) []string {
	return []string{"GIT_OBJECT_DIRECTORY=" + q.dir, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(repo, "objects"),
		"GIT_QUARANTINE_PATH=" + q.dir}
}

// size is what the quarantine holds on disk.
func (q *quarantine) size() (int64, error) { return diskBytes(q.dir, nil) }

// diskBytes adds up the sizes of the files under root but those skip names.
func diskBytes(root string, skip func(path string, d fs.DirEntry) bool) (int64, error) {
	var total int64
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || skip != nil && skip(path, d) {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			total += fi.Size()
		}
		return err
	})
	return total, err
}

// migrate moves the quarantine's packs into the repository: each .idx after its pack
// (git looks for packs by their index), leaving nothing of a half-written pack.
func (q *quarantine) migrate(repo string) error {
	src := filepath.Join(q.dir, "pack")
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), "pack-") {
			names = append(names, e.Name())
		}
	}
	// .idx last: a reader that sees the index finds its pack.
	slices.SortFunc(names, func(a, b string) int {
		return packRank(a) - packRank(b)
	})
	dst := filepath.Join(repo, "objects", "pack")
	for _, name := range names {
		if err := os.Rename(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return nil
}

func packRank(name string) int {
	if strings.HasSuffix(name, ".idx") {
		return 1
	}
	return 0
}

// remove deletes what is left of the quarantine (everything, when refused).
func (q *quarantine) remove() { _ = os.RemoveAll(q.dir) }

// writeBasePacks records the packs a new workspace repository was made with.
func writeBasePacks(repo string) error {
	entries, err := os.ReadDir(filepath.Join(repo, "objects", "pack"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var list strings.Builder
	for _, e := range entries {
		list.WriteString(e.Name() + "\n")
	}
	return os.WriteFile(filepath.Join(repo, basePacks), []byte(list.String()), 0o600)
}

// lockImport takes the workspace repository's import lock (flock, so replicas on a
// shared volume take turns too), or answers that another import runs. Quarantines
// left by a hub that died mid-import are removed under it.
func lockImport(repo string) (unlock func(), err error) {
	f, err := nofollow.Open(filepath.Join(repo, "wshub-import.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, core.Errorf(core.CodeImportInProgress, "another upload of this workspace's commits is being taken; retry when it is done")
		}
		return nil, err
	}
	stale, _ := filepath.Glob(filepath.Join(repo, "objects", "incoming-*"))
	for _, dir := range stale {
		_ = os.RemoveAll(dir)
	}
	return func() { f.Close() }, nil
}
