package machines

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/core"
)

// LocalMachines runs workspaces on this host: each workspace is a directory under
// Dir holding its checkout. There is no machine to start or stop, so pause and archive
// only change state; delete removes the checkout.
type LocalMachines struct {
	Dir string
	// Auth gives each project's credentials for pushing (nil: none).
	Auth *gitrepo.ProjectCredentials
	// DiskBytes is each workspace's disk quota, its checkout and home together (0:
	// none): over it, a turn's work is not committed and the reply says why.
	DiskBytes int64
	// Author is who the turns' commits are by (zero: gitrepo.DefaultAuthor).
	Author gitrepo.Author
	// Git is the checkouts' git program ("": git on PATH).
	Git string

	// clean remembers which checkouts git status last found with nothing to commit.
	clean gitrepo.CleanTrees
}

var _ core.Machines = (*LocalMachines)(nil)

func (m *LocalMachines) root(ws *core.Workspace) string { return filepath.Join(m.Dir, ws.ID) }

func (m *LocalMachines) checkout(ws *core.Workspace) *gitrepo.Checkout {
	return &gitrepo.Checkout{Dir: filepath.Join(m.root(ws), "checkout"),
		MaxBytes: m.DiskBytes, Counted: []string{m.Home(ws)}, Author: m.Author, Git: m.Git, Clean: &m.clean}
}

// Allocate makes the workspace's directory.
func (m *LocalMachines) Allocate(ctx context.Context, ws *core.Workspace) error {
	if err := os.MkdirAll(m.root(ws), 0o755); err != nil {
		return &core.SetupError{StatusCode: core.FailureStatus(core.FailureProvision, core.ReasonDisk), Detail: "the workspace's directory could not be made on the host", Err: err}
	}
	return nil
}

// Checkout clones the project mirror on the workspace branch.
func (m *LocalMachines) Checkout(ctx context.Context, ws *core.Workspace, p *core.Project) (string, error) {
	if p.MirrorPath == "" || p.State != core.ProjectReady {
		return "", &core.SetupError{StatusCode: core.FailureStatus(core.FailureSetup, core.ReasonProjectNotReady), Detail: "the project has no mirror"}
	}
	co := m.checkout(ws)
	err := co.Create(ctx, p.MirrorPath, ws.Branch, ws.BaseRef)
	switch {
	case errors.Is(err, gitrepo.ErrRefNotFound):
		return "", &core.SetupError{StatusCode: core.FailureStatus(core.FailureSetup, core.ReasonBaseRefNotFound), Detail: fmt.Sprintf("baseRef %q is not a branch, tag or commit of the repository", ws.BaseRef), Err: err}
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		var ge *gitrepo.Error
		if errors.As(err, &ge) {
			return "", &core.SetupError{StatusCode: core.FailureStatus(core.FailureSetup, core.ReasonCheckout), Detail: ge.Error(), Err: err}
		}
		return "", err
	}
	return co.Dir, nil
}

// Resume checks that the checkout is still there.
func (m *LocalMachines) Resume(ctx context.Context, ws *core.Workspace, p *core.Project) (string, error) {
	co := m.checkout(ws)
	if _, err := os.Stat(filepath.Join(co.Dir, ".git")); err != nil {
		return "", fmt.Errorf("checkout of %s is gone: %w", ws.ID, err)
	}
	return co.Dir, nil
}

// Pause has nothing to stop on this host.
func (m *LocalMachines) Pause(ctx context.Context, ws *core.Workspace) error { return nil }

// Archive keeps the checkout as it is.
func (m *LocalMachines) Archive(ctx context.Context, ws *core.Workspace) error { return nil }

// Delete removes the workspace's directory.
func (m *LocalMachines) Delete(ctx context.Context, ws *core.Workspace) error {
	m.clean.Forget(m.checkout(ws).Dir)
	return os.RemoveAll(m.root(ws))
}

// CommitTurn commits the turn's changes and pushes when the project asks for it. A
// push the remote refuses is reported in the result, with the remote's reason.
func (m *LocalMachines) CommitTurn(ctx context.Context, ws *core.Workspace, p *core.Project, message string) (core.TurnCommit, error) {
	co := m.checkout(ws)
	committed, left, err := co.Commit(ctx, ws.Branch, message)
	var leftOut strings.Builder
	for _, l := range left {
		leftOut.WriteString(l.String() + "\n")
	}
	if err != nil || !committed {
		return core.TurnCommit{LeftOut: leftOut.String()}, err
	}
	tc := core.TurnCommit{Committed: true, LeftOut: leftOut.String()}
	if st, err := co.Head(ctx, ws.Branch); err == nil {
		tc.SHA, tc.Files, tc.Insertions, tc.Deletions = st.SHA, st.Files, st.Insertions, st.Deletions
	}
	if !p.Push {
		return tc, nil
	}
	creds, err := m.Auth.For(ctx, p)
	if err == nil {
		co.Credentials = creds
		err = co.Push(ctx, p.Repository, ws.Branch)
	}
	if err != nil {
		if ctx.Err() != nil {
			return tc, err
		}
		tc.PushRefused, tc.PushError = true, gitrepo.PushRefusal(err)
		return tc, nil
	}
	tc.Pushed = true
	return tc, nil
}

// WriteFile places an attachment under .context/files/ in the checkout, never
// following a symlink out of it (files.go).
func (m *LocalMachines) WriteFile(ctx context.Context, ws *core.Workspace, name string, data []byte) (string, error) {
	return WriteAttachment(m.checkout(ws).Dir, name, data)
}

// WriteAttachment places a file named name (any path in it dropped) under
// .context/files/ in the checkout at dir, never following a symlink out of it, and
// returns its path relative to dir. `wshub runtime` places attachments with it too.
func WriteAttachment(dir, name string, data []byte) (string, error) {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == ".." || name == "/" {
		name = "attachment"
	}
	return writeBeneath(dir, name, data)
}

// KeepOutOfCommits keeps what setup wrote, and the cached paths the repository does
// not track, out of the workspace's turn commits.
func (m *LocalMachines) KeepOutOfCommits(ctx context.Context, ws *core.Workspace, paths []string) error {
	return m.checkout(ws).KeepOut(ctx, ws.Branch, paths)
}
