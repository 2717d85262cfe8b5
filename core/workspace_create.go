package core

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"unicode"
)

// CreateWorkspaceInput is what a caller sent to create a workspace. Nil means absent.
type CreateWorkspaceInput struct {
	Prompt      *string
	ProjectID   *string
	ProviderID  *string
	Agent       *string
	Model       *string
	RuntimeMode *string
	BaseRef     *string
	Branch      *string
	// HeaderKey and BodyKey are the two places an idempotency key can come from.
	HeaderKey *string
	BodyKey   *string
	// Origin says which front-end is creating it (api, slack, discord).
	Origin string
	// thread, for chat front-ends, is recorded in the same transaction.
	thread *ChatThread
	// author wrote the prompt (nil: the request's API key).
	author *Author
}

// createRequest is the validated, normalised request; it is also the idempotency
// fingerprint, so it holds only what the caller sent.
type createRequest struct {
	Prompt      *string `json:"prompt"`
	ProjectID   *string `json:"projectId"`
	ProviderID  *string `json:"providerId"`
	Agent       *string `json:"agent"`
	Model       *string `json:"model"`
	RuntimeMode *string `json:"runtimeMode"`
	BaseRef     *string `json:"baseRef"`
	Branch      *string `json:"branch"`
}

// ValidateCreate checks every field of a create request (the 400s) without the store.
func ValidateCreate(in CreateWorkspaceInput) (createRequest, string, error) {
	var r createRequest
	key, err := IdempotencyKey(in.HeaderKey, in.BodyKey)
	if err != nil {
		return r, "", err
	}
	if in.Prompt != nil {
		p := cleanText(*in.Prompt)
		if p == "" {
			return r, "", Errorf(CodeInvalidPrompt, "prompt must not be empty; omit it to create an idle workspace")
		}
		if chars(p) > MaxTextChars {
			return r, "", Errorf(CodeInvalidPrompt, "prompt must be at most 65536 characters")
		}
		r.Prompt = &p
	}
	r.ProjectID = trimmed(in.ProjectID)
	if r.ProjectID != nil && *r.ProjectID == "" {
		return r, "", Errorf(CodeInvalidRequest, "projectId must not be empty")
	}
	r.ProviderID = trimmed(in.ProviderID)
	if r.ProviderID != nil && *r.ProviderID == "" {
		return r, "", Errorf(CodeInvalidRequest, "providerId must not be empty")
	}
	if r.Agent = trimmed(in.Agent); r.Agent != nil && !slices.Contains(AgentIDs, *r.Agent) {
		return r, "", Errorf(CodeInvalidRequest, "agent must be one of agent_1, agent_2, agent_3, agent_4")
	}
	if r.Model = trimmed(in.Model); r.Model != nil && (*r.Model == "" || chars(*r.Model) > MaxModelChars) {
		return r, "", Errorf(CodeInvalidRequest, "model must be 1 to 200 characters")
	}
	if r.Model != nil && strings.IndexFunc(*r.Model, unicode.IsControl) >= 0 { // a NUL would also fail in the store
		return r, "", Errorf(CodeInvalidRequest, "model must not contain control characters")
	}
	if r.RuntimeMode = trimmed(in.RuntimeMode); r.RuntimeMode != nil && !slices.Contains(RuntimeModes, *r.RuntimeMode) {
		return r, "", Errorf(CodeInvalidRequest, "runtimeMode must be one of %s", strings.Join(RuntimeModes, ", "))
	}
	if r.BaseRef = trimmed(in.BaseRef); r.BaseRef != nil {
		if err := validateRef("baseRef", *r.BaseRef, true); err != nil {
			return r, "", err
		}
	}
	if r.Branch = trimmed(in.Branch); r.Branch != nil {
		if err := validateRef("branch", *r.Branch, false); err != nil {
			return r, "", err
		}
	}
	return r, key, nil
}

func trimmed(p *string) *string {
	if p == nil {
		return nil
	}
	t := strings.TrimSpace(*p)
	return &t
}

// CreateWorkspace starts a workspace (state queued) with an optional first message.
// It returns created=false when an idempotent replay returned an existing workspace.
func (s *Workspaces) CreateWorkspace(ctx context.Context, acct *Account, in CreateWorkspaceInput) (ws *Workspace, created bool, err error) {
	req, key, err := ValidateCreate(in)
	if err != nil {
		return nil, false, err
	}
	origin := in.Origin
	if origin == "" {
		origin = OriginAPI
	}
	author := authorOf(acct, in.author)
	err = inTx(ctx, s.store, func(q Queries) error {
		ws, created, err = s.createIn(ctx, q, acct, req, key, origin, author, in.thread)
		return err
	})
	if err == nil {
		s.withTitles(ws) // a replay's, read back
	}
	return ws, created, err
}

// createIn is CreateWorkspace's transaction: also run inside a schedule's, which
// records the run in the same commit.
func (s *Workspaces) createIn(ctx context.Context, q Queries, acct *Account, req createRequest, key, origin string, author *Author,
	thread *ChatThread) (*Workspace, bool, error) {
	var receipt *Receipt
	if key != "" {
		receipt = &Receipt{
			AccountID: acct.ID, Scope: scopeCreate(), Key: key, Fingerprint: fingerprint(req),
			ResourceID: DerivedID(PrefixWorkspace, acct.ID, scopeCreate(), key), CreatedAt: s.clock.Now(),
		}
		stored, replay, err := claimKey(ctx, q, receipt, CodeIdempotencyKeyReused, "request",
			func(id string) error { return errOf(q.GetWorkspaceByID(ctx, id)) })
		if err != nil {
			return nil, false, err
		}
		if replay {
			ws, err := accountWorkspace(ctx, q, acct, stored.ResourceID)
			return ws, false, notFound(err, CodeWorkspaceNotFound, "the workspace created with this key was deleted")
		}
	}
	ws, err := s.newWorkspace(ctx, q, acct, req, origin)
	if err != nil {
		return nil, false, err
	}
	ws.StartedBy = author
	if err := s.quotas.checkWorkspaceQuota(ctx, q, acct); err != nil {
		return nil, false, err
	}
	if receipt != nil {
		ws.ID = receipt.ResourceID
	}
	if req.Prompt != nil {
		if err := s.sealTitle(ws, *req.Prompt); err != nil {
			return nil, false, err
		}
	}
	if err := q.InsertWorkspace(ctx, ws); err != nil {
		return nil, false, err
	}
	if thread != nil {
		thread.WorkspaceID = ws.ID
		if ok, err := q.InsertChatThread(ctx, thread); err != nil || !ok {
			return nil, false, cmp.Or(err, errThreadTaken)
		}
	}
	if req.Prompt != nil {
		m, err := s.appendUserMessage(ctx, q, ws, "", *req.Prompt, nil, author, 0) // the first: no quota to hold
		if err != nil {
			return nil, false, err
		}
		ws.OpenMessages, ws.UpdatedAt = true, m.CreatedAt // the insert touched the row
	}
	return ws, true, wake(ctx, q, WorkChannel, ws.ID) // wake the worker: the machine starts now
}

// newWorkspace resolves defaults and runs the lookup (404), state (409) and billing
// (403) checks in behaviour.md's order. It returns the row to insert.
func (s *Workspaces) newWorkspace(ctx context.Context, q Queries, acct *Account, req createRequest, origin string) (*Workspace, error) {
	project, err := s.resolveProject(ctx, q, acct, req.ProjectID)
	if err != nil {
		return nil, err
	}
	// The request's provider, else the account's (while this hub offers it), else the
	// hub's default.
	providerID := s.providers.Default()
	if acct.ProviderID != "" && s.hasProvider(ctx, acct.ProviderID) {
		providerID = acct.ProviderID
	}
	if req.ProviderID != nil {
		providerID = *req.ProviderID
		if !s.hasProvider(ctx, providerID) {
			return nil, Errorf(CodeProviderUnavailable, "provider %q is not available on this hub", providerID)
		}
	}
	agent, model, err := s.resolveAgentModel(ctx, q, acct, req.Agent, req.Model)
	if err != nil {
		return nil, err
	}
	if project.State != ProjectReady {
		return nil, Errorf(CodeProjectNotReady, "project %s is %s; workspaces need a ready project", project.ID, project.State)
	}
	branch := ""
	if req.Branch != nil {
		branch = *req.Branch
		holder, err := q.WorkspaceUsingBranch(ctx, project.ID, branch)
		if err == nil {
			return nil, BranchInUse(holder)
		}
		if !errors.Is(err, ErrNoRows) {
			return nil, err
		}
		// An existing branch of the repository is not "in use" (no live workspace has
		// it) but a workspace would fork it or, pushing, overwrite it: the name is
		// unusable as given, a 400, decided once the project is known.
		if project.State == ProjectReady {
			exists, err := s.mirror.HasBranch(ctx, s.mirror.Path(project.ID), branch)
			if err != nil {
				// Fail open: a mirror that cannot be read now fails the workspace's setup
				// with git's reason, which says more than a 500 here would.
				s.log().Warn("look up branch in the project's mirror", "project", project.ID, "branch", branch, "err", err)
			}
			if exists {
				return nil, Errorf(CodeInvalidGitRef, "branch %q already exists in the project's repository; name a new branch, or omit branch for a generated one", branch)
			}
		}
	} else if branch, err = s.freeBranch(ctx, q, project.ID); err != nil {
		return nil, err
	}
	if err := acct.checkBilling(s.clock.Now()); err != nil {
		return nil, err
	}
	if req.Prompt != nil {
		if err := s.requireSealer(); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	ws := &Workspace{
		ID: NewID(s.rand, PrefixWorkspace), AccountID: acct.ID, ProjectID: project.ID, ProviderID: providerID,
		Agent: agent, Model: model, RuntimeMode: DefaultRuntimeMode, Branch: branch, BaseRef: project.DefaultBranch,
		Origin: origin, State: StateQueued, StatusCode: string(StateQueued), StartupPhase: PhaseAllocating,
		RuntimeState: RuntimeOffline, CreatedAt: now, UpdatedAt: now, Host: s.host.pinHost(providerID),
	}
	if req.RuntimeMode != nil {
		ws.RuntimeMode = *req.RuntimeMode
	}
	if req.BaseRef != nil {
		ws.BaseRef = *req.BaseRef
	}
	return ws, nil
}

// resolveProject applies api.md 4.1 and behaviour.md: the named project, or else the
// only ready project when it is the account's one project; with none, several, or one
// that is not ready, the caller must name one. A key limited to projects sees only
// those: another is not found, and the default is taken among its own.
func (s *Workspaces) resolveProject(ctx context.Context, q Queries, acct *Account, id *string) (*Project, error) {
	if id != nil {
		if !ValidID(*id, PrefixProject) || !acct.KeyLimits.reaches(*id) { // no such project; and a NUL would fail in the store
			return nil, Errorf(CodeProjectNotFound, "no project with this id on this account")
		}
		p, err := q.ShareProject(ctx, acct.ID, *id)
		return p, notFound(err, CodeProjectNotFound, "no project with this id on this account")
	}
	projects, err := accountProjects(ctx, q, acct)
	if err != nil {
		return nil, err
	}
	if len(projects) != 1 {
		return nil, Errorf(CodeCloudProjectRequired, "name a projectId: this account has %d projects", len(projects))
	}
	if projects[0].State != ProjectReady {
		return nil, Errorf(CodeCloudProjectRequired, "name a projectId: this account has no ready project")
	}
	// Held against removal like a named project; removed since the listing: none left.
	p, err := q.ShareProject(ctx, acct.ID, projects[0].ID)
	return p, notFound(err, CodeCloudProjectRequired, "name a projectId: this account has no ready project")
}

func (s *Workspaces) hasProvider(ctx context.Context, id string) bool {
	for _, p := range s.providers.List(ctx) {
		if p.ID == id {
			return true
		}
	}
	return false
}

// resolveAgentModel fills agent and model from the account's newest workspace.
func (s *Workspaces) resolveAgentModel(ctx context.Context, q WorkspaceQueries, acct *Account, agent, model *string) (string, string, error) {
	if agent != nil && model != nil {
		return *agent, *model, nil
	}
	newest, err := q.NewestWorkspace(ctx, acct.ID)
	if errors.Is(err, ErrNoRows) {
		return "", "", Errorf(CodeAgentAndModelRequired, "name an agent and a model: this account has no earlier workspace to take them from")
	}
	if err != nil {
		return "", "", err
	}
	a, m := newest.Agent, newest.Model
	if agent != nil {
		a = *agent
	}
	if model != nil {
		m = *model
	}
	return a, m, nil
}

// freeBranch generates branch names until one is not used by a live workspace.
func (s *Workspaces) freeBranch(ctx context.Context, q Queries, projectID string) (string, error) {
	for i := 0; i < 20; i++ {
		b := GenerateBranch(s.rand)
		if _, err := q.WorkspaceUsingBranch(ctx, projectID, b); errors.Is(err, ErrNoRows) {
			return b, nil
		} else if err != nil {
			return "", err
		}
	}
	return "", errors.New("no free generated branch name after 20 tries")
}

// ListWorkspaces returns the account's workspaces that are not deleted, oldest first.
func (s *Workspaces) ListWorkspaces(ctx context.Context, acct *Account) ([]*Workspace, error) {
	list, err := accountWorkspaces(ctx, s.store, acct)
	s.withTitles(list...)
	return list, err
}

// GetWorkspace returns one workspace of the account.
func (s *Workspaces) GetWorkspace(ctx context.Context, acct *Account, id string) (*Workspace, error) {
	ws, err := accountWorkspace(ctx, s.store, acct, id)
	if err == nil {
		s.pulls.refreshSoon(ws)
		s.withTitles(ws)
	}
	return ws, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
}
