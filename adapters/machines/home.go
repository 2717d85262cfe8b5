package machines

import (
	"path/filepath"

	"github.com/wshub/wshub/core"
)

// Home is the workspace's home directory, beside its checkout and outside it: agent
// CLIs keep their sessions and caches there across turns, and none of it is committed.
// The agent runner creates it on the first turn (so workspaces made before it existed
// get one too) and Delete removes it with the rest of the workspace's directory.
func (m *LocalMachines) Home(ws *core.Workspace) string { return filepath.Join(m.root(ws), "home") }
