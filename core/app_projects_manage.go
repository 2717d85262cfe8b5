package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Owners add, fix and remove the account's projects in the app. They are the
// operator's project commands (Admin's), one rule set, on the session's account only,
// audited as the owner's, with two limits of their own: the repository is an https or
// ssh remote on a public host (appRepository), and it comes with its own credential,
// because a project without one is fetched with the hub-wide credential, which is the
// operator's and may reach repositories the account should not.

// The audited changes of projects made in the app: the target is the project, the
// detail its repository (added, removed) or what changed.
const (
	AuditProjectAdded   = "project.added"
	AuditProjectChanged = "project.changed"
	AuditProjectRemoved = "project.removed"
)

// maxProjectName bounds a project's name given in the app, as its form does.
const maxProjectName = 100

// Mirroring from the app runs in the background, at most maxMirrors at once on a hub
// (more wait their turn, their projects connected), each within mirrorFor of its add
// or fix. A project still connected or preparing past that was left by a hub that
// stopped: it can be fixed (which mirrors it again) or removed.
const (
	maxMirrors = 2
	mirrorFor  = 15 * time.Minute
)

// AppProjectInput is the app's add form.
type AppProjectInput struct {
	Repository string
	Name       string
	// Credential is a token (https) or an SSH deploy key (ssh), as the repository needs.
	Credential string
}

// AppProjectChange is the app's fix form: every field is set, as the form shows them.
type AppProjectChange struct {
	ProjectID     string
	Name          string
	DefaultBranch string
	Push          bool
	PullRequests  string
	// Forge is the repository's forge ("": detected from its URL, as on add).
	Forge string
	// Credential replaces the project's credential; "" keeps it.
	Credential string
}

// ProjectOverview is a project as the projects page lists it.
type ProjectOverview struct {
	Project *Project
	// Mirroring says the project is being mirrored (connected or preparing, within
	// mirrorFor); a project connected or preparing but not mirroring was stopped.
	Mirroring bool
	// Environment is the project's own environment settings (nil: the repository's
	// files say, at each workspace's base); Secrets its secrets' names.
	Environment *Environment
	Secrets     []string
}

// Overview lists the account's projects with their state and environment (owners),
// credentials and secrets' values left out.
func (s *AppProjects) Overview(ctx context.Context, a *AppSession) ([]*ProjectOverview, error) {
	list, err := s.List(ctx, a)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, p := range list {
		ids[i] = p.ID
	}
	names, err := s.secrets.store.ProjectSecretNames(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*ProjectOverview, 0, len(list))
	for _, p := range list {
		out = append(out, &ProjectOverview{Project: p, Mirroring: s.mirroring(p),
			Environment: ProjectEnvironmentSettings(p), Secrets: names[p.ID]})
	}
	return out, nil
}

// Project reads one of the account's live projects (owners), its credential left out.
func (s *AppProjects) Project(ctx context.Context, a *AppSession, projectID string) (*Project, error) {
	p, err := s.owned(ctx, a, projectID)
	if err != nil {
		return nil, err
	}
	return shownProject(p), nil
}

// owned reads one of the account's live projects for an owner; another account's, or a
// removed one, is not found.
func (s *AppProjects) owned(ctx context.Context, a *AppSession, projectID string) (*Project, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	p, err := s.store.GetProject(ctx, a.AccountID, projectID)
	if err == nil && p.RemovedAt != nil {
		err = ErrNoRows
	}
	return p, notFound(err, CodeNotFound, "no such project")
}

// MaxAppProjects bounds the live projects an account's owners may have when they add
// one in the app (the operator's command is not bounded).
const MaxAppProjects = 50

// Add connects a repository to the account (owners) and mirrors it in the background:
// the project is returned connected, and its state shows the mirroring's outcome.
func (s *AppProjects) Add(ctx context.Context, a *AppSession, in AppProjectInput) (*Project, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	repo, kind, err := s.policy.appRepository(in.Repository)
	if err != nil {
		return nil, err
	}
	if chars(strings.TrimSpace(in.Name)) > maxProjectName {
		return nil, Errorf(CodeInvalidRequest, "a project's name is at most %d characters", maxProjectName)
	}
	if strings.TrimSpace(in.Credential) == "" {
		return nil, Errorf(CodeInvalidRequest, "give %s: the hub reaches the repository with it", credentialNoun(kind))
	}
	p, err := newProject(ctx, s.admin, AddProjectInput{AccountID: a.AccountID, Repository: repo, Name: in.Name,
		Forge: ProjectForgeInput{Credential: appCredential(kind, in.Credential)}})
	if err != nil {
		return nil, err
	}
	p.RemoteGuarded = true // an owner's repository: the hub's git reaches it at public addresses only
	err = s.admin.store.InTx(ctx, func(q Queries) error {
		// Each project is a mirror on the hub's disk: owners add a bounded number.
		live, err := q.ListProjects(ctx, a.AccountID)
		if err != nil {
			return err
		}
		if len(live) >= MaxAppProjects {
			return Errorf(CodeQuotaExceeded, "the account has %d projects, the most the app adds: remove one first, or ask the hub's operator", len(live))
		}
		if err := q.CreateProject(ctx, p); err != nil {
			return err
		}
		return a.audit(ctx, q, p.CreatedAt, AuditProjectAdded, p.ID, DisplayRepository(p.Repository))
	})
	if err != nil {
		return nil, err
	}
	s.mirrorSoon(p.ID)
	return shownProject(p), nil
}

// Change fixes one of the account's projects (owners): its name, default branch (which
// the repository must have, once mirrored), push and pull request settings, and its
// credential (a ready project's repository is fetched with it first). A project that
// is not ready is mirrored again with the fix. A project
// being mirrored is refused: the mirroring's outcome would overwrite the fix.
func (s *AppProjects) Change(ctx context.Context, a *AppSession, in AppProjectChange) (*Project, error) {
	p, err := s.notMirroring(ctx, a, in.ProjectID, "fix")
	if err != nil {
		return nil, err
	}
	if chars(strings.TrimSpace(in.Name)) > maxProjectName {
		return nil, Errorf(CodeInvalidRequest, "a project's name is at most %d characters", maxProjectName)
	}
	before := *p
	upd := UpdateProjectInput{ProjectID: p.ID, Name: &in.Name, Push: &in.Push, Forge: ProjectForgeInput{Forge: &in.Forge, PullRequests: &in.PullRequests}}
	if b := strings.TrimSpace(in.DefaultBranch); b != "" {
		upd.DefaultBranch = &b
	}
	if strings.TrimSpace(in.Credential) != "" {
		_, kind, err := s.policy.appRepository(p.Repository)
		if err != nil {
			return nil, Errorf(CodeInvalidRequest, "the operator added this project's repository: its credential is changed with wshub admin project update")
		}
		upd.Forge.Credential = appCredential(kind, in.Credential)
	}
	if err := changeProject(ctx, s.admin, p, upd); err != nil {
		return nil, err
	}
	if upd.Forge.Credential != nil && p.State == ProjectReady {
		// Tried before it is kept: a ready project with a credential that no longer
		// reaches its repository would fail every workspace's start.
		if err := s.admin.forHub(ctx, p, s.admin.mirror); err != nil {
			return nil, err
		}
		if err := s.admin.mirror.Refresh(ctx, p, 0); err != nil {
			return nil, Errorf(CodeInvalidRequest, "the repository could not be fetched with the new credential (%v); the one it had is kept", err)
		}
	}
	err = s.admin.store.InTx(ctx, func(q Queries) error {
		if err := q.UpdateProject(ctx, p); err != nil {
			return err
		}
		return a.audit(ctx, q, p.UpdatedAt, AuditProjectChanged, p.ID, projectChanges(&before, p, upd.Forge.Credential != nil))
	})
	if err != nil {
		return nil, err
	}
	if p.State != ProjectReady {
		s.mirrorSoon(p.ID)
	}
	return shownProject(p), nil
}

// Remove removes one of the account's projects (owners), as the operator's remove
// without force: refused while live workspaces use it.
func (s *AppProjects) Remove(ctx context.Context, a *AppSession, projectID string) (*RemovedProject, error) {
	if _, err := s.notMirroring(ctx, a, projectID, "remove"); err != nil {
		return nil, err
	}
	out, err := removeProject(ctx, s.admin, projectID, false, a)
	if out != nil && out.Project != nil {
		out.Project = shownProject(out.Project)
	}
	return out, err
}

// notMirroring reads one of the account's live projects (owners) for a change, which
// waits while the project is being mirrored.
func (s *AppProjects) notMirroring(ctx context.Context, a *AppSession, projectID, what string) (*Project, error) {
	p, err := s.owned(ctx, a, projectID)
	if err != nil {
		return nil, err
	}
	if s.mirroring(p) {
		return nil, Errorf(CodeProjectInUse, "the project is being mirrored: %s it once that ends (reload its page to see)", what)
	}
	return p, nil
}

// mirroring reports whether p is being mirrored (or waits to be), as far as the time
// since its last change tells.
func (s *AppProjects) mirroring(p *Project) bool {
	return (p.State == ProjectConnected || p.State == ProjectPreparing) && s.admin.clock.Now().Sub(p.UpdatedAt) < mirrorFor
}

// mirrorSoon mirrors the project in the background, reading it again when its turn
// comes: it may have been removed meanwhile.
func (s *AppProjects) mirrorSoon(projectID string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), mirrorFor)
		defer cancel()
		select {
		case s.mirrors <- struct{}{}:
			defer func() { <-s.mirrors }()
		case <-ctx.Done():
		}
		p, err := s.admin.store.GetProjectByID(ctx, projectID)
		if err == nil && p.RemovedAt == nil {
			err = s.admin.PrepareProject(ctx, p)
		}
		if err != nil {
			s.admin.log().Warn("mirror a project added in the app", "project", projectID, "err", err)
		}
	}()
}

// appCredential is the credential the app's form gave, as the repository takes it.
func appCredential(kind, text string) *ProjectCredential {
	if kind == CredentialSSHKey {
		// A textarea sends CRLF; ssh reads a key file's lines with LF.
		return &ProjectCredential{Kind: kind, SSHKey: strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")) + "\n"}
	}
	return &ProjectCredential{Kind: kind, Token: text}
}

func credentialNoun(kind string) string {
	if kind == CredentialSSHKey {
		return "a deploy key (an SSH private key)"
	}
	return "a token"
}

// projectChanges says what a fix changed, for the audit log (never a credential).
func projectChanges(before, after *Project, credential bool) string {
	var out []string
	if before.DisplayName != after.DisplayName {
		out = append(out, fmt.Sprintf("name %q", after.DisplayName))
	}
	if before.DefaultBranch != after.DefaultBranch {
		out = append(out, "default branch "+after.DefaultBranch)
	}
	if before.Push != after.Push {
		out = append(out, fmt.Sprintf("push %t", after.Push))
	}
	if before.Forge != after.Forge {
		out = append(out, "forge "+after.Forge)
	}
	if before.PullRequests != after.PullRequests {
		out = append(out, "pull requests "+after.PullRequests)
	}
	if credential {
		out = append(out, "credential replaced")
	}
	if len(out) == 0 {
		return "nothing changed"
	}
	return strings.Join(out, ", ")
}

// shownProject is p without its credential, sealed or open: what a page may hold.
func shownProject(p *Project) *Project {
	c := *p
	c.SealedCredential, c.Credential = nil, nil
	return &c
}
