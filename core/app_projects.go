package core

import "context"

// AppProjects are the app's project pages: the account's owners see its projects,
// add, fix and remove them (app_projects_manage.go), and manage their secrets. The
// secrets are the operator's secret commands (ProjectSecrets), one rule set, on the session's account only, with the member as the audit log's actor.
// Members are refused as they are from the keys: a secret set here reaches every
// setup of the project, which is an owner's trust to give.
type AppProjects struct {
	store   ProjectQueries
	secrets *ProjectSecrets
	// admin holds the operator's project use cases the owners' run on; policy the
	// hosts a repository may be on (a webhook's); mirrors the mirrorings running.
	admin   *Admin
	forge   *ForgeAdmin
	policy  WebhookURLPolicy
	mirrors chan struct{}
}

// List lists the account's projects (owners), their credentials left out.
func (s *AppProjects) List(ctx context.Context, a *AppSession) ([]*Project, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	list, err := s.store.ListProjects(ctx, a.AccountID)
	for _, p := range list {
		p.SealedCredential = nil
	}
	return list, err
}

// Secrets reads one of the account's projects and its secrets in name order, never
// their values (owners). Another account's project is not found.
func (s *AppProjects) Secrets(ctx context.Context, a *AppSession, projectID string) (*Project, []*ProjectSecret, error) {
	if err := a.requireOwner(); err != nil {
		return nil, nil, err
	}
	p, list, err := s.secrets.list(ctx, projectID, a.AccountID)
	if p != nil {
		p.SealedCredential = nil
	}
	return p, list, err
}

// SetSecret creates or replaces a secret of one of the account's projects (owners),
// under ProjectSecrets.Set's rules.
func (s *AppProjects) SetSecret(ctx context.Context, a *AppSession, in ProjectSecretInput) (*ProjectSecret, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	sec, err := s.secrets.set(ctx, in, a.AccountID, a.actor())
	if sec != nil {
		sec.SealedValue = nil
	}
	return sec, err
}

// RemoveSecret deletes a secret of one of the account's projects (owners).
func (s *AppProjects) RemoveSecret(ctx context.Context, a *AppSession, projectID, name string) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	return s.secrets.remove(ctx, projectID, name, a.AccountID, a.actor())
}

// AuditEnvironmentSet and AuditEnvironmentCleared record an owner's change of a
// project's environment settings.
const (
	AuditEnvironmentSet     = "project.environment_set"
	AuditEnvironmentCleared = "project.environment_cleared"
)

// SetEnvironment replaces the environment settings of one of the account's projects
// (owners), which win over the repository's files from each new workspace on; nil
// removes them. Settings are refused in the words a workspace would fail with.
func (s *AppProjects) SetEnvironment(ctx context.Context, a *AppSession, projectID string, settings []byte) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	env, err := projectEnvironment(UpdateProjectInput{Environment: settings, ClearEnvironment: settings == nil})
	if err != nil {
		return err
	}
	return s.secrets.store.InTx(ctx, func(q Queries) error {
		p, err := q.LockProject(ctx, projectID)
		if p, err = secretProject(p, err, a.AccountID); err != nil {
			return err
		}
		now := s.secrets.clock.Now()
		p.Environment, p.UpdatedAt = env, now
		if err := q.UpdateProject(ctx, p); err != nil {
			return err
		}
		kind := AuditEnvironmentSet
		if env == nil {
			kind = AuditEnvironmentCleared
		}
		return a.actor().audit(ctx, q, p.AccountID, now, kind, p.ID, "")
	})
}
