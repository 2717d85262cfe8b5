// Package gitrepo keeps bare mirror clones of project repositories, from which the
// local provider checks out each workspace's branch.
package gitrepo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// Mirror is a core.RepoMirror that keeps one bare mirror per project at
// <Dir>/<projectID>.git, using the git command line. The command line rather than a
// Go git library because it speaks every transport and credential setup the
// operator's git already does.
//
// A Mirror must not be copied after first use. Calls for one project are serialised
// within the process; the atomic rename of a fresh clone keeps other processes from
// seeing a half-made mirror.
type Mirror struct {
	// Dir holds the mirrors. It is created (mode 0700) on first use.
	Dir string
	// Git is the git program; empty means "git" on PATH.
	Git string
	// Auth gives each project's credentials for private repositories (nil: none).
	Auth *ProjectCredentials

	locks sync.Map // project id -> *sync.Mutex
}

var _ core.RepoMirror = (*Mirror)(nil)

// Mirror clones repository (a local path or a URL) as the project's mirror, or
// refreshes the mirror if it exists, and returns the mirror's absolute path and the
// repository's default branch ("" when the repository is empty or HEAD names no
// branch). Errors read as a short reason fit to show an operator.
func (m *Mirror) Mirror(ctx context.Context, p *core.Project) (path, defaultBranch string, err error) {
	dir, path, repository, err := m.place(p.ID, p.Repository)
	if err != nil {
		return "", "", err
	}
	g, err := m.git(ctx, dir, path, repository, p)
	if err != nil {
		return "", "", err
	}
	mu := m.lock(p.ID)
	mu.Lock()
	defer mu.Unlock()
	if err := m.fetch(ctx, g, dir, p.ID, path, repository); err != nil {
		return "", "", err
	}
	branch, err := g.defaultBranch(ctx, path)
	if err != nil {
		return "", "", err
	}
	stampFetched(path)
	return path, branch, nil
}

// place checks the project id and the repository, and says where the project's mirror
// goes: the mirrors' directory and the mirror's path in it, both absolute.
func (m *Mirror) place(projectID, repository string) (dir, path, repo string, err error) {
	if err := checkProjectID(projectID); err != nil {
		return "", "", "", err
	}
	if repo, err = normaliseRepository(repository); err != nil {
		return "", "", "", err
	}
	if dir, err = filepath.Abs(m.dir()); err != nil {
		return "", "", "", fmt.Errorf("mirror directory: %w", err)
	}
	return dir, filepath.Join(dir, projectID+".git"), repo, nil
}

// fetch clones the mirror at path when this data directory has none, and fetches it
// otherwise; the caller holds the project's lock. The mirror is this hub's cache of the
// repository: one made under another data directory (an admin command run with another
// WSHUB_DATA_DIR, a replica with a disk of its own) is not here, so it is made.
func (m *Mirror) fetch(ctx context.Context, g *runner, dir, projectID, path, repository string) error {
	switch _, err := os.Stat(path); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("mirror directory: %s", reasonOf(err, g.redact))
		}
		return g.clone(ctx, dir, projectID, path, repository)
	case err != nil:
		return fmt.Errorf("mirror directory: %s", reasonOf(err, g.redact))
	}
	return g.refresh(ctx, path, repository)
}

// fetchedStamp, inside a mirror, is touched after each successful fetch: its time is
// the mirror's age, shared by every process on the host that uses the mirror.
const fetchedStamp = "wshub-fetched"

func stampFetched(path string) {
	// Best effort: without the stamp the next Refresh fetches again.
	_ = os.WriteFile(filepath.Join(path, fetchedStamp), nil, 0o600)
	now := time.Now()
	_ = os.Chtimes(filepath.Join(path, fetchedStamp), now, now)
}

// Refresh fetches the project's mirror unless it was fetched less than maxAge ago, and
// clones it when this data directory has none. Calls for one project are serialised, so
// workspaces provisioned together share one fetch: those that waited find the mirror
// fresh. On error the mirror is as it was.
func (m *Mirror) Refresh(ctx context.Context, p *core.Project, maxAge time.Duration) error {
	dir, path, repository, err := m.place(p.ID, p.Repository)
	if err != nil {
		return err
	}
	mu := m.lock(p.ID)
	mu.Lock()
	defer mu.Unlock()
	if fi, err := os.Stat(filepath.Join(path, fetchedStamp)); err == nil && time.Since(fi.ModTime()) < maxAge {
		return nil
	}
	g, err := m.git(ctx, dir, path, repository, p)
	if err != nil {
		return err
	}
	if err := m.fetch(ctx, g, dir, p.ID, path, repository); err != nil {
		return err
	}
	stampFetched(path)
	return nil
}

// Path is where the project's mirror is in this hub's data directory (whether or not
// it is there yet: Refresh makes it).
func (m *Mirror) Path(projectID string) string {
	dir, err := filepath.Abs(m.dir())
	if err != nil {
		dir = m.dir()
	}
	return filepath.Join(dir, projectID+".git")
}

// Remove deletes the project's mirror. Workspace checkouts do not depend on it (they
// are cloned with --local: hard links, no alternates), so they keep working.
func (m *Mirror) Remove(ctx context.Context, projectID string) error {
	if err := checkProjectID(projectID); err != nil {
		return err
	}
	dir, err := filepath.Abs(m.dir())
	if err != nil {
		return fmt.Errorf("mirror directory: %w", err)
	}
	mu := m.lock(projectID)
	mu.Lock()
	defer mu.Unlock()
	if err := os.RemoveAll(filepath.Join(dir, projectID+".git")); err != nil {
		return fmt.Errorf("remove mirror: %s", reasonOf(err, redactor{dir: dir}))
	}
	return nil
}

func (m *Mirror) dir() string {
	if m.Dir == "" {
		return "."
	}
	return m.Dir
}

// git is the runner of the project's mirror, with the project's credentials.
func (m *Mirror) git(ctx context.Context, dir, path, repository string, p *core.Project) (*runner, error) {
	creds, err := m.Auth.For(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("the project's credential: %w", err)
	}
	return &runner{prog: cmp.Or(m.Git, "git"), redact: redactor{dir: dir, mirror: path, repository: repository, token: creds.token()},
		creds: creds}, nil
}

func (m *Mirror) lock(projectID string) *sync.Mutex {
	mu, _ := m.locks.LoadOrStore(projectID, new(sync.Mutex))
	return mu.(*sync.Mutex)
}

// checkProjectID keeps the id a single, ordinary path component: it names a directory.
func checkProjectID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`+"\x00") || strings.HasPrefix(id, ".") {
		return fmt.Errorf("invalid project id %q", id)
	}
	return nil
}

// normaliseRepository refuses what git would read as an option, and makes an existing
// relative local path absolute: git stores the source in the mirror's config, and a
// refresh must not depend on the hub's working directory.
func normaliseRepository(repo string) (string, error) {
	switch {
	case repo == "":
		return "", errors.New("no repository given")
	case strings.HasPrefix(repo, "-"):
		return "", fmt.Errorf("invalid repository %q", repo)
	case strings.Contains(repo, "://"):
		return repo, nil
	case filepath.IsAbs(repo):
		return repo, notARepository(repo)
	}
	if _, err := os.Stat(repo); err == nil {
		abs, err := filepath.Abs(repo)
		if err != nil {
			return "", err
		}
		return abs, notARepository(abs)
	}
	return repo, nil
}

// notARepository says so when the local path is a directory git does not take for a
// repository (git's own words would be that it "does not exist").
func notARepository(path string) error {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return nil // git says what is wrong with a path that is missing or not a directory
	}
	for _, marker := range []string{filepath.Join(path, ".git"), filepath.Join(path, "HEAD")} {
		if _, err := os.Stat(marker); err == nil {
			return nil // a work tree, or a bare repository
		}
	}
	return fmt.Errorf("%s is a directory, but not a git repository (no .git in it, and not a bare repository)", path)
}
