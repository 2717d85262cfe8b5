package main

// wshub admin project add|update|refresh|remove|list.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wshub/wshub/core"
)

// networkUsage is the --network flag's help.
const networkUsage = "what agent turns may reach: full (the internet, not the hub host), none, or host (the hub host's network; unsafe)"

func projectAdd(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	repo := fs.String("repository", "", "repository URL or local path")
	name := fs.String("name", "", "display name (default: the repository's name)")
	branch := fs.String("default-branch", "", "default branch (default: detected)")
	push := fs.Bool("push", false, "push workspace branches after each turn")
	network := fs.String("network", core.NetworkFull, networkUsage)
	return func(ctx context.Context, h adminHub) (any, error) {
		return addProject(ctx, h.svc, core.AddProjectInput{AccountID: *id, Repository: localPath(*repo), Name: *name,
			DefaultBranch: *branch, Push: *push, Network: *network})
	}
}

// addProject records the project and mirrors it now, so the operator sees the outcome.
func addProject(ctx context.Context, svc *core.Service, in core.AddProjectInput) (any, error) {
	p, err := svc.AddProject(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := svc.PrepareProject(ctx, p); err != nil {
		return nil, err
	}
	out := map[string]any{"projectId": p.ID, "state": p.State}
	if p.FailureReason != "" {
		out["failureReason"] = p.FailureReason
	}
	if p.State == core.ProjectFailed {
		// Kept (project list shows it, with the reason, and so does the API's project
		// list); the exit status says it failed, and the error how to go on.
		return out, fmt.Errorf("the repository could not be mirrored: %s. The project is kept, failed: retry with "+
			"wshub admin project refresh --project %s once the repository is reachable, or remove it with "+
			"wshub admin project remove --project %s", p.FailureReason, p.ID, p.ID)
	}
	return out, nil
}

// localPath makes an existing local repository path absolute, so the hub finds it
// whatever its working directory; URLs pass unchanged.
func localPath(repo string) string {
	if st, err := os.Stat(repo); err == nil && st.IsDir() {
		if abs, err := filepath.Abs(repo); err == nil {
			return abs
		}
	}
	return repo
}

func projectUpdate(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	name := fs.String("name", "", "display name")
	branch := fs.String("default-branch", "", "default branch")
	var push optBool
	fs.Var(&push, "push", "push workspace branches after each turn (true|false)")
	network := fs.String("network", "", networkUsage)
	return func(ctx context.Context, h adminHub) (any, error) {
		in := core.UpdateProjectInput{ProjectID: *id, Push: push.v}
		if flagGiven(fs, "network") {
			in.Network = network
		}
		if flagGiven(fs, "name") {
			in.Name = name
		}
		if flagGiven(fs, "default-branch") {
			in.DefaultBranch = branch
		}
		p, err := h.svc.AdminUpdateProject(ctx, in)
		if err != nil {
			return nil, err
		}
		return projectAdminJSON(p), nil
	}
}

func projectRefresh(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	return func(ctx context.Context, h adminHub) (any, error) {
		p, err := h.svc.AdminRefreshProject(ctx, *id)
		if err != nil {
			if p != nil {
				return projectAdminJSON(p), fmt.Errorf("the repository could not be fetched: %w", err)
			}
			return nil, err
		}
		if p.State == core.ProjectFailed {
			return projectAdminJSON(p), fmt.Errorf("the repository could not be mirrored: %s", p.FailureReason)
		}
		return projectAdminJSON(p), nil
	}
}

func projectRemove(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	force := fs.Bool("force", false, "archive the live workspaces that use the project first")
	return func(ctx context.Context, h adminHub) (any, error) {
		r, err := h.svc.AdminRemoveProject(ctx, *id, *force)
		if err != nil {
			return nil, err
		}
		out := projectAdminJSON(r.Project)
		out["archivedWorkspaces"] = append([]string{}, r.Archived...)
		if r.MirrorError != "" {
			out["mirrorError"] = r.MirrorError
		}
		return out, nil
	}
}

func projectList(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.AdminListProjects(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(list))
		for i, p := range list {
			out[i] = projectAdminJSON(p)
		}
		return out, nil
	}
}

func projectAdminJSON(p *core.Project) map[string]any {
	out := map[string]any{
		"projectId": p.ID, "repository": core.DisplayRepository(p.Repository), "displayName": p.DisplayName,
		"defaultBranch": p.DefaultBranch, "state": p.State, "push": p.Push, "network": p.Network,
	}
	if p.FailureReason != "" {
		out["failureReason"] = p.FailureReason
	}
	if p.RemovedAt != nil {
		out["removedAt"] = p.RemovedAt.UTC().Format(time.RFC3339)
	}
	return out
}
