package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// The operator use cases behind `wshub admin`. They act for the operator, not for an
// account's key, so they take ids rather than an authenticated account.

// CreateAccount adds an account.
func (s *Admin) CreateAccount(ctx context.Context, a *Account) error {
	if strings.TrimSpace(a.Name) == "" {
		return Errorf(CodeInvalidRequest, "an account needs a name")
	}
	a.ID = NewID(s.rand, PrefixAccount)
	a.CreatedAt = s.clock.Now()
	return s.store.CreateAccount(ctx, a)
}

// AccountUpdate lists the flags to change; nil leaves a flag as it is.
type AccountUpdate struct {
	Entitled    *bool
	BillingHold *bool
	Metered     *bool
	// BillingPeriodEnd: set to change; ClearBillingPeriod removes it.
	BillingPeriodEnd   *time.Time
	ClearBillingPeriod bool
	// MaxWorkspaces, MaxOpenMessages, MaxRunningTurns and MaxKeys set the account's
	// quotas (-1: back to the hub's defaults).
	MaxWorkspaces, MaxOpenMessages, MaxRunningTurns, MaxKeys *int
	// ProviderID sets the provider of the account's workspaces whose create names
	// none ("": back to the hub's default).
	ProviderID *string
}

// UpdateAccount changes entitlement and billing flags.
func (s *Admin) UpdateAccount(ctx context.Context, id string, u AccountUpdate) (*Account, error) {
	var acct *Account
	err := s.store.InTx(ctx, func(q Queries) error {
		if err := q.LockAccount(ctx, id); err != nil {
			return notFound(err, CodeNotFound, "no such account")
		}
		a, err := q.GetAccount(ctx, id)
		if err != nil {
			return err
		}
		if u.Entitled != nil {
			a.Entitled = *u.Entitled
		}
		if u.BillingHold != nil {
			a.BillingHold = *u.BillingHold
		}
		if u.Metered != nil {
			a.Metered = *u.Metered
		}
		if u.BillingPeriodEnd != nil {
			a.BillingPeriodEnd = u.BillingPeriodEnd
		}
		if u.ClearBillingPeriod {
			a.BillingPeriodEnd = nil
		}
		for _, f := range []struct {
			set *int
			to  **int
		}{{u.MaxWorkspaces, &a.MaxWorkspaces}, {u.MaxOpenMessages, &a.MaxOpenMessages}, {u.MaxRunningTurns, &a.MaxRunningTurns}, {u.MaxKeys, &a.MaxKeys}} {
			switch {
			case f.set == nil:
			case *f.set == -1:
				*f.to = nil
			case *f.set < 0:
				return Errorf(CodeInvalidRequest, "a quota is 0 or more, or -1 for the hub's default")
			default:
				*f.to = f.set
			}
		}
		if u.ProviderID != nil {
			if *u.ProviderID != "" && !s.workspaces.hasProvider(ctx, *u.ProviderID) {
				return Errorf(CodeInvalidRequest, "provider %q is not one of this hub's (WSHUB_PROVIDERS)", *u.ProviderID)
			}
			a.ProviderID = *u.ProviderID
		}
		acct = a
		return q.UpdateAccount(ctx, a)
	})
	return acct, err
}

// CreateAPIKey makes a key with full access for an account and returns its secret,
// shown only once.
func (s *Admin) CreateAPIKey(ctx context.Context, accountID, name string) (*APIKey, string, error) {
	return s.CreateLimitedAPIKey(ctx, NewKeyInput{AccountID: accountID, Name: name})
}

// CreateLimitedAPIKey makes a key limited to scopes, projects and an expiry (each
// optional) and returns its secret, shown only once.
func (s *Admin) CreateLimitedAPIKey(ctx context.Context, in NewKeyInput) (*APIKey, string, error) {
	var key *APIKey
	var secret string
	err := s.store.InTx(ctx, func(q Queries) error {
		acct, err := q.GetAccount(ctx, in.AccountID)
		if err != nil {
			return notFound(err, CodeNotFound, "no such account")
		}
		if key, secret, err = createAPIKey(ctx, q, s.kernel, s.workspaces.quotas, acct, in, ""); err != nil {
			return err
		}
		return operatorAudit(ctx, q, acct.ID, key.CreatedAt, AuditKeyCreated, key.ID, key.Limits.auditDetail(key.Name))
	})
	return key, secret, err
}

// maxKeyName bounds a key's name, as the app's form does.
const maxKeyName = 100

// keyStore is what making a key reads and writes.
type keyStore interface {
	AccountQueries
	ListProjects(ctx context.Context, accountID string) ([]*Project, error)
}

// createAPIKey makes a key for the account (the operator's, or an owner's in the app),
// within its key quota: only its hash is kept, and the secret is returned to be shown
// once.
func createAPIKey(ctx context.Context, store keyStore, k kernel, quotas Quotas, acct *Account, in NewKeyInput, by string) (*APIKey, string, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" || chars(name) > maxKeyName {
		return nil, "", Errorf(CodeInvalidRequest, "a key needs a name of 1 to %d characters", maxKeyName)
	}
	var projects []*Project
	if strings.TrimSpace(in.Projects) != "" {
		var err error
		if projects, err = store.ListProjects(ctx, acct.ID); err != nil {
			return nil, "", err
		}
	}
	limits, err := keyLimits(in, k.clock.Now(), projects)
	if err != nil {
		return nil, "", err
	}
	if err := quotas.checkKeyQuota(ctx, store, acct); err != nil {
		return nil, "", err
	}
	secret := NewAPIKey(k.rand)
	key := &APIKey{ID: NewID(k.rand, PrefixKey), AccountID: acct.ID, Name: name, Hash: HashAPIKey(secret),
		CreatedAt: k.clock.Now(), CreatedBy: by, Limits: limits}
	if err := store.CreateAPIKey(ctx, key); err != nil {
		return nil, "", err
	}
	return key, secret, nil
}

// WorkCounts is the size of the work queue, for metrics.
type WorkCounts struct {
	// ByState counts workspaces by state, deleted ones left out.
	ByState map[string]int64
	// OpenMessages are user messages pending or in a turn, over all workspaces;
	// BusyWorkspaces the workspaces that have any; DeepestQueue the most one has.
	OpenMessages, BusyWorkspaces, DeepestQueue int64
}

// CountWork is the work queue's size for metrics.
func (s *Admin) CountWork(ctx context.Context) (*WorkCounts, error) {
	return s.store.CountWork(ctx)
}

// ListAccounts lists every account for the operator.
func (s *Admin) ListAccounts(ctx context.Context) ([]*Account, error) {
	return s.store.ListAccounts(ctx)
}

// ListAPIKeys lists an account's keys (never their secrets, which are not kept).
func (s *Admin) ListAPIKeys(ctx context.Context, accountID string) ([]*APIKey, error) {
	if _, err := s.store.GetAccount(ctx, accountID); err != nil {
		return nil, notFound(err, CodeNotFound, "no such account")
	}
	return s.store.ListAPIKeys(ctx, accountID)
}

// RevokeAPIKey revokes a key; the next request with it is refused.
func (s *Admin) RevokeAPIKey(ctx context.Context, keyID string) error {
	return s.store.InTx(ctx, func(q Queries) error {
		now := s.clock.Now()
		ok, err := q.RevokeAPIKey(ctx, keyID, now)
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(CodeNotFound, "no such key, or it is already revoked")
		}
		k, err := q.GetAPIKey(ctx, keyID)
		if err != nil {
			return err
		}
		return operatorAudit(ctx, q, k.AccountID, now, AuditKeyRevoked, keyID, k.Name)
	})
}

// AddProjectInput describes a repository to connect.
type AddProjectInput struct {
	AccountID     string
	Repository    string
	Name          string
	DefaultBranch string
	Push          bool
	// Network is NetworkFull (the default, when empty), NetworkNone or NetworkHost.
	Network string
	// Forge is the forge, pull request setting and credential.
	Forge ProjectForgeInput
}

// AddProject records a project as connected and returns it; PrepareProject mirrors it.
func (s *Admin) AddProject(ctx context.Context, in AddProjectInput) (*Project, error) {
	p, err := newProject(ctx, s, in)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateProject(ctx, p); err != nil {
		return nil, err
	}
	s.warnHostNetwork(p)
	return p, nil
}

// newProject checks in and makes the project it describes, connected, its credential
// sealed, for the caller to create (the operator's add, or an owner's in the app).
func newProject(ctx context.Context, s *Admin, in AddProjectInput) (*Project, error) {
	repo := strings.TrimSpace(in.Repository)
	if repo == "" {
		return nil, Errorf(CodeInvalidRequest, "a project needs a repository")
	}
	if err := checkRepositoryCredentials(repo); err != nil {
		return nil, err
	}
	if in.DefaultBranch != "" {
		if err := validateRef("default branch", in.DefaultBranch, false); err != nil {
			return nil, err
		}
	}
	network := cmp.Or(in.Network, NetworkFull)
	if !ValidNetwork(network) {
		return nil, errNetwork(in.Network)
	}
	if _, err := s.store.GetAccount(ctx, in.AccountID); err != nil {
		return nil, notFound(err, CodeNotFound, "no such account")
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = strings.TrimSuffix(path.Base(strings.TrimRight(repo, "/")), ".git")
	}
	now := s.clock.Now()
	p := &Project{
		ID: NewID(s.rand, PrefixProject), AccountID: in.AccountID, Repository: repo, DisplayName: name,
		DefaultBranch: in.DefaultBranch, State: ProjectConnected, Push: in.Push, Network: network, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.applyForge(p, in.Forge); err != nil {
		return nil, err
	}
	return p, nil
}

// warnHostNetwork logs a project given the host's network: its agents reach the hub's
// loopback, its database and the metadata service, so the choice is left on record.
func (s *Admin) warnHostNetwork(p *Project) {
	if p.Network == NetworkHost {
		s.log().Warn("project network set to host: its agents share the hub host's network (loopback, private addresses, metadata service)",
			"project", p.ID, "repository", p.Repository)
	}
}

// PrepareProject mirrors the repository: connected -> preparing -> ready, or failed
// with the reason kept. The default branch is detected unless one was given.
func (s *Admin) PrepareProject(ctx context.Context, p *Project) error {
	p.State, p.UpdatedAt = ProjectPreparing, s.clock.Now()
	if err := s.store.UpdateProject(ctx, p); err != nil {
		return err
	}
	mirror, branch, err := "", "", s.openCredential(ctx, p)
	if err == nil {
		mirror, branch, err = s.mirror.Mirror(ctx, p)
	}
	switch {
	case err != nil:
		p.State, p.FailureReason = ProjectFailed, err.Error()
	case p.DefaultBranch == "" && branch == "":
		p.State, p.FailureReason = ProjectFailed, "the repository has no default branch (is it empty?)"
	case p.DefaultBranch != "" && !mirrorHas(ctx, s.mirror, mirror, p.DefaultBranch):
		p.State, p.FailureReason = ProjectFailed, fmt.Sprintf("the repository has no branch %q (the default branch given)", p.DefaultBranch)
	default:
		p.State, p.FailureReason, p.MirrorPath = ProjectReady, "", mirror
		if p.DefaultBranch == "" {
			p.DefaultBranch = branch
		}
	}
	p.UpdatedAt = s.clock.Now()
	if uerr := s.store.UpdateProject(context.WithoutCancel(ctx), p); uerr != nil {
		return errors.Join(err, uerr)
	}
	return nil
}

// UpdateProjectInput changes a project's settings; nil fields are left as they are.
type UpdateProjectInput struct {
	ProjectID     string
	Name          *string
	DefaultBranch *string
	Push          *bool
	Network       *string
	Forge         ProjectForgeInput
	// Environment replaces the project's environment settings (JSON of an
	// .wshub/environment.json), which win over the repository's files from each new
	// workspace on; ClearEnvironment removes them.
	Environment      []byte
	ClearEnvironment bool
}

// mirrorHas reports whether the mirror at path has the branch; a mirror that cannot be
// read says no.
func mirrorHas(ctx context.Context, m RepoMirror, path, branch string) bool {
	ok, err := m.HasBranch(ctx, path, branch)
	return err == nil && ok
}

// requireBranch refuses a default branch the project's repository lacks (as its
// mirror here has it, fetched first).
func (s *Admin) requireBranch(ctx context.Context, p *Project, branch string) error {
	if p.State != ProjectReady {
		return nil // no mirror to ask; PrepareProject checks it when it makes one
	}
	if err := s.forHub(ctx, p, s.mirror); err != nil {
		return err
	}
	if err := s.mirror.Refresh(ctx, p, 0); err != nil {
		return fmt.Errorf("fetch the repository to check the branch: %w", err)
	}
	if !mirrorHas(ctx, s.mirror, s.mirror.Path(p.ID), branch) {
		return Errorf(CodeInvalidRequest, "the repository has no branch %q", branch)
	}
	return nil
}

// UpdateProject changes a project's settings. Network and push apply from the next
// turn of each of its workspaces; the default branch to workspaces created after.
func (s *Admin) UpdateProject(ctx context.Context, in UpdateProjectInput) (*Project, error) {
	p, err := s.liveProject(ctx, in.ProjectID)
	if err != nil {
		return nil, err
	}
	if err := changeProject(ctx, s, p, in); err != nil {
		return nil, err
	}
	if err := s.store.UpdateProject(ctx, p); err != nil {
		return nil, err
	}
	if in.Network != nil {
		s.warnHostNetwork(p)
	}
	return p, nil
}

// changeProject checks in and applies it to p, for the caller to store (the operator's
// update, or an owner's fix in the app); a new default branch is looked for in the
// repository, fetched with p's new credential.
func changeProject(ctx context.Context, s *Admin, p *Project, in UpdateProjectInput) error {
	if in.Network != nil && !ValidNetwork(*in.Network) {
		return errNetwork(*in.Network)
	}
	if in.Name != nil && strings.TrimSpace(*in.Name) == "" {
		return Errorf(CodeInvalidRequest, "a project's name must not be empty")
	}
	if in.DefaultBranch != nil {
		if err := validateRef("default branch", *in.DefaultBranch, false); err != nil {
			return err
		}
	}
	env, err := projectEnvironment(in)
	if err != nil {
		return err
	}
	if in.Network != nil {
		p.Network = *in.Network
	}
	// Before the branch check: a new credential is the one that fetches.
	if err := s.applyForge(p, in.Forge); err != nil {
		return err
	}
	if in.Name != nil {
		p.DisplayName = strings.TrimSpace(*in.Name)
	}
	if in.DefaultBranch != nil && *in.DefaultBranch != p.DefaultBranch {
		if err := s.requireBranch(ctx, p, *in.DefaultBranch); err != nil {
			return err
		}
		p.DefaultBranch = *in.DefaultBranch
	}
	if in.Push != nil {
		p.Push = *in.Push
	}
	if in.ClearEnvironment || env != nil {
		p.Environment = env
	}
	p.UpdatedAt = s.clock.Now()
	return nil
}

// RefreshProject fetches a project's repository now: a ready project's mirror is
// fetched in place (it stays ready, so creates go on); any other is prepared again
// (a failed add retried, with the default branch detected).
func (s *Admin) RefreshProject(ctx context.Context, projectID string) (*Project, error) {
	p, err := s.liveProject(ctx, projectID)
	if err != nil {
		return nil, err
	}
	if p.State != ProjectReady {
		return p, s.PrepareProject(ctx, p)
	}
	if err := s.forHub(ctx, p, s.mirror); err != nil {
		return p, err
	}
	return p, s.mirror.Refresh(ctx, p, 0)
}

// liveProject reads a project for an operator command that changes it: a removed
// project is not found.
func (s *Admin) liveProject(ctx context.Context, id string) (*Project, error) {
	return liveProjectByID(ctx, s.store, id)
}

// projectByID reads any account's project.
type projectByID interface {
	GetProjectByID(ctx context.Context, id string) (*Project, error)
}

// liveProjectByID reads a project an operator command names: a removed project is
// not found.
func liveProjectByID(ctx context.Context, store projectByID, id string) (*Project, error) {
	p, err := store.GetProjectByID(ctx, id)
	if err == nil && p.RemovedAt != nil {
		return nil, Errorf(CodeNotFound, "the project was removed")
	}
	return p, notFound(err, CodeNotFound, "no such project")
}

// ListProjects lists an account's projects for the operator. A GitHub project with no
// credential of its own says CredentialAccountApp when the account's GitHub App has a
// key: its git and forge calls go through the App's installation.
func (s *Admin) ListProjects(ctx context.Context, accountID string) ([]*Project, error) {
	list, err := s.store.ListProjects(ctx, accountID)
	if err != nil {
		return nil, err
	}
	app, err := s.store.GetGitHubApp(ctx, accountID)
	switch {
	case errors.Is(err, ErrNoRows):
		return list, nil
	case err != nil:
		return nil, err
	}
	for _, p := range list {
		if len(app.SealedKey) > 0 && p.Forge == ForgeGitHub && p.CredentialKind == "" {
			p.CredentialKind = CredentialAccountApp
		}
	}
	return list, nil
}

// Admin is the operator's commands: accounts, keys, projects and resealing.
type Admin struct {
	kernel
	logger
	store      adminStore
	blobs      BlobStore
	mirror     RepoMirror
	sealed     SealedStore
	workspaces *Workspaces

	// caches are dropped with their project.
	caches *envCaches
}

// adminStore is what Admin reads and writes.
type adminStore interface {
	TxStore
	AccountQueries
	ProjectQueries
	ChatQueries
	DeliveryQueries
	MemberQueries
	GitHubAppQueries
	AppSessionQueries
}
