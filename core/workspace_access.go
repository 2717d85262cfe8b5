package core

import (
	"context"
	"slices"
)

// accountWorkspace reads a workspace the caller may see: the account's, of a project
// its key reaches. Every use case a key can call reads its workspace through this or
// lockAccountWorkspace (a test holds core to it). A workspace of a project outside the
// key's set is not found, as another account's is, so its existence does not leak.
func accountWorkspace(ctx context.Context, q WorkspaceQueries, acct *Account, id string) (*Workspace, error) {
	ws, err := q.GetWorkspace(ctx, acct.ID, id)
	return reachable(acct, ws, err)
}

// lockAccountWorkspace is accountWorkspace holding the row lock.
func lockAccountWorkspace(ctx context.Context, q WorkspaceQueries, acct *Account, id string) (*Workspace, error) {
	ws, err := q.LockWorkspace(ctx, acct.ID, id)
	return reachable(acct, ws, err)
}

// accountWorkspaces lists the account's workspaces of the projects the key reaches.
func accountWorkspaces(ctx context.Context, q WorkspaceQueries, acct *Account) ([]*Workspace, error) {
	list, err := q.ListWorkspaces(ctx, acct.ID)
	return slices.DeleteFunc(list, func(ws *Workspace) bool { return !acct.KeyLimits.reaches(ws.ProjectID) }), err
}

// reachable turns a workspace of a project the key does not reach into no rows.
func reachable(acct *Account, ws *Workspace, err error) (*Workspace, error) {
	if err == nil && !acct.KeyLimits.reaches(ws.ProjectID) {
		return nil, ErrNoRows
	}
	return ws, err
}

// accountProjects lists the account's projects the key reaches.
func accountProjects(ctx context.Context, q ProjectQueries, acct *Account) ([]*Project, error) {
	list, err := q.ListProjects(ctx, acct.ID)
	return slices.DeleteFunc(list, func(p *Project) bool { return !acct.KeyLimits.reaches(p.ID) }), err
}
