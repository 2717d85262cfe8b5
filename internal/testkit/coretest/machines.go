package coretest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// Machines are core's Machines in a test: each workspace's checkout is a directory
// under the test's temporary directory. A turn of a project that pushes commits a
// change and pushes it (which opens or updates its pull request); any other turn
// changed nothing.
type Machines struct {
	dir string

	mu      sync.Mutex
	commits int
	// states records each workspace's machine operations, in order.
	states map[string][]string
}

var _ core.Machines = (*Machines)(nil)

func newMachines(t testing.TB) *Machines {
	return &Machines{dir: t.TempDir(), states: map[string][]string{}}
}

// Ops are the machine operations done on a workspace, in order ("allocate",
// "checkout", "commit", "pause", ...).
func (m *Machines) Ops(workspaceID string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.states[workspaceID]...)
}

func (m *Machines) record(ws *core.Workspace, op string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states[ws.ID] = append(m.states[ws.ID], op)
}

func (m *Machines) checkout(ws *core.Workspace) string { return filepath.Join(m.dir, ws.ID) }

// Allocate reserves nothing: the test's temporary directory is the machine.
func (m *Machines) Allocate(_ context.Context, ws *core.Workspace) error {
	m.record(ws, "allocate")
	return nil
}

// Checkout makes the workspace's directory.
func (m *Machines) Checkout(_ context.Context, ws *core.Workspace, _ *core.Project) (string, error) {
	m.record(ws, "checkout")
	dir := m.checkout(ws)
	return dir, os.MkdirAll(dir, 0o755)
}

// Resume finds the directory again.
func (m *Machines) Resume(_ context.Context, ws *core.Workspace, _ *core.Project) (string, error) {
	m.record(ws, "resume")
	dir := m.checkout(ws)
	_, err := os.Stat(dir)
	return dir, err
}

// Pause does nothing but record it.
func (m *Machines) Pause(_ context.Context, ws *core.Workspace) error {
	m.record(ws, "pause")
	return nil
}

// Archive does nothing but record it.
func (m *Machines) Archive(_ context.Context, ws *core.Workspace) error {
	m.record(ws, "archive")
	return nil
}

// Delete removes the directory.
func (m *Machines) Delete(_ context.Context, ws *core.Workspace) error {
	m.record(ws, "delete")
	return os.RemoveAll(m.checkout(ws))
}

// CommitTurn commits and pushes a change when the project pushes, else nothing.
func (m *Machines) CommitTurn(_ context.Context, ws *core.Workspace, p *core.Project, _ string) (core.TurnCommit, error) {
	m.record(ws, "commit")
	m.mu.Lock()
	defer m.mu.Unlock()
	if !p.Push {
		return core.TurnCommit{}, nil
	}
	m.commits++
	return core.TurnCommit{Committed: true, SHA: fmt.Sprintf("%040x", m.commits), Files: 1, Insertions: 1, Pushed: true}, nil
}

// KeepOutOfCommits has nothing to keep out.
func (m *Machines) KeepOutOfCommits(context.Context, *core.Workspace, []string) error { return nil }

// Home is a directory beside the checkout.
func (m *Machines) Home(ws *core.Workspace) string { return m.checkout(ws) + ".home" }

// WriteFile writes an attachment into the checkout.
func (m *Machines) WriteFile(_ context.Context, ws *core.Workspace, name string, data []byte) (string, error) {
	return name, os.WriteFile(filepath.Join(m.checkout(ws), name), data, 0o644)
}

// mirror is core's RepoMirror with no repository behind it: every project's default
// branch is main, and a branch exists only when it is main.
type mirror struct{ dir string }

func (r *mirror) Mirror(_ context.Context, p *core.Project) (string, string, error) {
	return r.Path(p.ID), "main", nil
}

func (r *mirror) Refresh(context.Context, *core.Project, time.Duration) error { return nil }
func (r *mirror) Remove(context.Context, string) error                        { return nil }
func (r *mirror) HasBranch(_ context.Context, _, branch string) (bool, error) {
	return branch == "main", nil
}
func (r *mirror) Path(projectID string) string { return filepath.Join(r.dir, projectID) }

// providers offer the local provider alone, with one size.
type providers struct{}

func (providers) List(context.Context) []core.Provider {
	return []core.Provider{{ID: core.LocalProviderID, DisplayName: "Local", BillingSource: "service",
		Sizes: []core.ProviderSize{{ID: "local", DisplayName: "Local", VCPUCount: 2, MemoryMiB: 2048}}}}
}

func (providers) Default() string { return core.LocalProviderID }

// agents say every agent is installed: the Runner runs them all.
type agents struct{}

func (agents) Available(context.Context) []string { return core.AgentIDs }
