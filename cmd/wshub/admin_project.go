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
	forge := addForgeFlags(fs, false)
	return func(ctx context.Context, h adminHub) (any, error) {
		fin, err := forge.input()
		if err != nil {
			return nil, err
		}
		return addProject(ctx, h.svc, core.AddProjectInput{AccountID: *id, Repository: localPath(*repo), Name: *name,
			DefaultBranch: *branch, Push: *push, Network: *network, Forge: fin})
	}
}

// addProject records the project and mirrors it now, so the operator sees the outcome.
func addProject(ctx context.Context, svc *core.Service, in core.AddProjectInput) (any, error) {
	p, err := svc.Admin.AddProject(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := svc.Admin.PrepareProject(ctx, p); err != nil {
		return nil, err
	}
	out := projectAdded{FailureReason: p.FailureReason, ProjectID: p.ID, State: p.State}
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
	forge := addForgeFlags(fs, true)
	events := addForgeEventsFlags(fs)
	envFile := fs.String("environment-file", "", "a JSON file of the form of .wshub/environment.json: the project's environment, which wins over the repository's files")
	noEnv := fs.Bool("no-environment", false, "remove the project's environment settings: the repository's files apply again")
	return func(ctx context.Context, h adminHub) (any, error) {
		fin, err := forge.input()
		if err != nil {
			return nil, err
		}
		ein, err := events.input()
		if err != nil {
			return nil, err
		}
		in := core.UpdateProjectInput{ProjectID: *id, Push: push.v, Forge: fin, ClearEnvironment: *noEnv}
		if flagGiven(fs, "environment-file") {
			env, err := readSecretFile("--environment-file", *envFile)
			if err != nil {
				return nil, err
			}
			in.Environment = []byte(env)
		}
		if flagGiven(fs, "network") {
			in.Network = network
		}
		if flagGiven(fs, "name") {
			in.Name = name
		}
		if flagGiven(fs, "default-branch") {
			in.DefaultBranch = branch
		}
		p, err := h.svc.Admin.UpdateProject(ctx, in)
		if err != nil {
			return nil, err
		}
		out := projectOf(p)
		if ein != nil { // after the update, which may have named the forge
			hook, err := h.svc.ForgeAdmin.SetForgeEvents(ctx, p.ID, *ein)
			if err != nil {
				return nil, err
			}
			if hook != nil {
				out.ForgeHandle, out.TriggerLabel, out.FixChecks = hook.Handle, hook.TriggerLabel, hook.FixChecks
			}
		}
		return out, nil
	}
}

func projectRefresh(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	return func(ctx context.Context, h adminHub) (any, error) {
		p, err := h.svc.Admin.RefreshProject(ctx, *id)
		if err != nil {
			if p != nil {
				return projectOf(p), fmt.Errorf("the repository could not be fetched: %w", err)
			}
			return nil, err
		}
		if p.State == core.ProjectFailed {
			return projectOf(p), fmt.Errorf("the repository could not be mirrored: %s", p.FailureReason)
		}
		return projectOf(p), nil
	}
}

func projectRemove(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	force := fs.Bool("force", false, "archive the live workspaces that use the project first")
	return func(ctx context.Context, h adminHub) (any, error) {
		r, err := h.svc.Admin.RemoveProject(ctx, *id, *force)
		if err != nil {
			return nil, err
		}
		return projectRemovedOf(r), nil
	}
}

func projectList(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.Admin.ListProjects(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]projectOut, len(list))
		for i, p := range list {
			out[i] = projectOf(p)
		}
		return out, nil
	}
}

// projectAdded is what project add prints: the outcome of the first mirroring.
type projectAdded struct {
	FailureReason string `json:"failureReason,omitempty"`
	ProjectID     string `json:"projectId"`
	State         string `json:"state"`
}

// projectOut is a project as the operator sees it.
type projectOut struct {
	// Credential is the kind of the project's own credential ("": the hub-wide one).
	Credential    string `json:"credential"`
	DefaultBranch string `json:"defaultBranch"`
	DisplayName   string `json:"displayName"`
	// Environment is the project's own environment settings (omitted: none).
	Environment   *core.Environment `json:"environment,omitempty"`
	FailureReason string            `json:"failureReason,omitempty"`
	// FixChecks is how many failed checks per pull request become follow-ups, shown as
	// ForgeHandle is (omitted: 0, off).
	FixChecks int    `json:"fixChecks,omitempty"`
	Forge     string `json:"forge"`
	// ForgeHandle is the handle of the project's forge events, shown by the update that
	// sets them.
	ForgeHandle  string `json:"forgeHandle,omitempty"`
	Network      string `json:"network"`
	ProjectID    string `json:"projectId"`
	PullRequests string `json:"pullRequests"`
	Push         bool   `json:"push"`
	RemovedAt    string `json:"removedAt,omitempty"`
	Repository   string `json:"repository"` // without credentials
	State        string `json:"state"`
	// TriggerLabel is the label that starts work on an issue, shown as ForgeHandle is.
	TriggerLabel string `json:"triggerLabel,omitempty"`
}

func projectOf(p *core.Project) projectOut {
	out := projectOut{ProjectID: p.ID, Repository: core.DisplayRepository(p.Repository), DisplayName: p.DisplayName,
		DefaultBranch: p.DefaultBranch, State: p.State, Push: p.Push, Network: p.Network, FailureReason: p.FailureReason,
		Credential: p.CredentialKind, Forge: p.Forge, PullRequests: p.PullRequests, Environment: core.ProjectEnvironmentSettings(p)}
	if p.RemovedAt != nil {
		out.RemovedAt = p.RemovedAt.UTC().Format(time.RFC3339)
	}
	return out
}

// projectRemoved is the removed project with what its removal did. Its fields are
// projectOut's and two more, spelled out to keep the output's order (embedding would
// put the two after the project's).
type projectRemoved struct {
	ArchivedWorkspaces []string `json:"archivedWorkspaces"`
	Credential         string   `json:"credential"`
	DefaultBranch      string   `json:"defaultBranch"`
	DisplayName        string   `json:"displayName"`
	FailureReason      string   `json:"failureReason,omitempty"`
	Forge              string   `json:"forge"`
	MirrorError        string   `json:"mirrorError,omitempty"`
	Network            string   `json:"network"`
	ProjectID          string   `json:"projectId"`
	PullRequests       string   `json:"pullRequests"`
	Push               bool     `json:"push"`
	RemovedAt          string   `json:"removedAt,omitempty"`
	Repository         string   `json:"repository"`
	State              string   `json:"state"`
}

func projectRemovedOf(r *core.RemovedProject) projectRemoved {
	p := projectOf(r.Project)
	return projectRemoved{ArchivedWorkspaces: append([]string{}, r.Archived...), Credential: p.Credential,
		DefaultBranch: p.DefaultBranch, DisplayName: p.DisplayName, FailureReason: p.FailureReason, Forge: p.Forge,
		MirrorError: r.MirrorError, Network: p.Network, ProjectID: p.ProjectID, PullRequests: p.PullRequests, Push: p.Push, RemovedAt: p.RemovedAt, Repository: p.Repository, State: p.State}
}
