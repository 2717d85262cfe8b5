package core

import "context"

// Environment caches (issue #44 §4). Placeholder until the caches land.

// restoreCaches restores the environment's caches saved for ws's project and base,
// telling say what it restored.
func (s environments) restoreCaches(ctx context.Context, ws *Workspace, p *Project, env *Environment, say func(string)) error {
	return nil
}

// saveCaches saves the environment's caches after a successful setup; a cache that
// cannot be saved is told to say and logged, never a failure of the workspace.
func (s environments) saveCaches(ctx context.Context, ws *Workspace, p *Project, env *Environment, say func(string)) {
}
