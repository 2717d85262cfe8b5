package main

// wshub admin workspace archive|unarchive|delete.

import (
	"context"
	"flag"

	"github.com/wshub/wshub/core"
)

func workspaceArchive(fs *flag.FlagSet) adminRun {
	return workspaceMove(fs, func(ctx context.Context, svc *core.Service, id string) (*core.Workspace, error) {
		return svc.Admin.ArchiveWorkspace(ctx, id)
	})
}

func workspaceUnarchive(fs *flag.FlagSet) adminRun {
	return workspaceMove(fs, func(ctx context.Context, svc *core.Service, id string) (*core.Workspace, error) {
		return svc.Admin.UnarchiveWorkspace(ctx, id)
	})
}

func workspaceDelete(fs *flag.FlagSet) adminRun {
	return workspaceMove(fs, func(ctx context.Context, svc *core.Service, id string) (*core.Workspace, error) {
		return svc.Admin.DeleteWorkspace(ctx, id)
	})
}

// workspaceMove is a command that moves a workspace to another state, and prints it.
func workspaceMove(fs *flag.FlagSet, move func(context.Context, *core.Service, string) (*core.Workspace, error)) adminRun {
	id := fs.String("workspace", "", "workspace id")
	return func(ctx context.Context, h adminHub) (any, error) {
		ws, err := move(ctx, h.svc, *id)
		if err != nil {
			return nil, err
		}
		return workspaceOut{State: string(ws.State), WorkspaceID: ws.ID}, nil
	}
}

type workspaceOut struct {
	State       string `json:"state"`
	WorkspaceID string `json:"workspaceId"`
}
