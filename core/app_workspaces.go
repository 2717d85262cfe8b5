package core

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AppWorkspaces are the app's workspace pages: the account's members see its
// workspaces and drive them as themselves. They are the API's use cases on the
// session's account, with the member as the author of what they write.
type AppWorkspaces struct {
	kernel
	store      appWorkspacesStore
	blobs      BlobStore
	app        *App
	workspaces *Workspaces
	diffs      BranchDiffs // the diff page's (app_diff.go)
	diffLimits DiffLimits
	diffCache  *diffCache
	diffRuns   *accountRuns
	workTips   workTips // the work section's (app_work.go)
	logger
	// branches and mirror bring this hub's cache of a remote branch up to date first.
	branches Branches
	mirror   RepoMirror
}

type appWorkspacesStore interface {
	TxStore
	AccountQueries
	WorkspaceQueries
	ChatQueries
	ProjectQueries
	AssetQueries
	WorkspaceEnvironment(ctx context.Context, id string) ([]byte, error)
}

// The app's list pages hold this many workspaces, and at most maxWorkspacePage.
const (
	defaultWorkspacePage = 50
	maxWorkspacePage     = 200
	// conversationTail is how many of the newest messages a workspace's page shows.
	conversationTail = MaxMessagesPage
	// stepsShown bounds the turn events a page reads (the newest): the running turn's
	// steps, and those of the turns before it, folded under their replies.
	stepsShown = 300
)

// WorkspaceFilter picks the workspaces a list page shows, newest first.
type WorkspaceFilter struct {
	// Mine keeps the workspaces the session's member started.
	Mine bool
	// State keeps one state ("": every state but deleted); Origin keeps one origin.
	State, Origin string
	// Attention keeps the workspaces someone should look at (Workspace.NeedsAttention).
	Attention bool
	// Before is the cursor of the page to show (a WorkspaceList's Next; "": the newest).
	Before string
	Limit  int
}

// WorkspacePageQuery is a WorkspaceFilter as the store reads it.
type WorkspacePageQuery struct {
	AccountID string
	MemberID  string // "": anyone's
	State     WorkspaceState
	Origin    string
	// Attention keeps the workspaces that need attention (Workspace.NeedsAttention).
	Attention bool
	// BeforeAt and BeforeID: only workspaces older than this one (zero: none).
	BeforeAt time.Time
	BeforeID string
	Limit    int
}

// WorkspaceList is one page of the list.
type WorkspaceList struct {
	Workspaces []*Workspace
	// Projects are the account's projects by id, for their names.
	Projects map[string]*Project
	// Next is the cursor of the following (older) page, "" on the last.
	Next string
	// Awaiting holds the listed workspaces with an approval waiting for a person.
	Awaiting map[string]bool
}

// Badge is a listed workspace's badge.
func (l *WorkspaceList) Badge(w *Workspace) Badge { return w.Badge(l.Awaiting[w.ID]) }

// account reads the session's account for the workspace use cases: like the API,
// they need the account's cloud entitlement.
func (s *AppWorkspaces) account(ctx context.Context, a *AppSession) (*Account, error) {
	acct, err := s.app.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return acct, acct.checkEntitled()
}

// List reads one page of the account's workspaces, newest first: keyset paging on
// (created_at, id), so the thousandth page costs what the first does.
func (s *AppWorkspaces) List(ctx context.Context, a *AppSession, f WorkspaceFilter) (*WorkspaceList, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	q := WorkspacePageQuery{AccountID: acct.ID, Origin: f.Origin, Attention: f.Attention, Limit: f.Limit}
	if q.Limit <= 0 || q.Limit > maxWorkspacePage {
		q.Limit = defaultWorkspacePage
	}
	if f.Mine {
		q.MemberID = a.Member.ID
	}
	if f.State != "" {
		if q.State = WorkspaceState(f.State); !slices.Contains(listableStates, q.State) {
			return nil, Errorf(CodeInvalidRequest, "there is no state %q", f.State)
		}
	}
	if f.Origin != "" && !slices.Contains([]string{OriginAPI, OriginSlack, OriginDiscord, OriginApp, OriginSchedule}, f.Origin) {
		return nil, Errorf(CodeInvalidRequest, "there is no origin %q", f.Origin)
	}
	if f.Before != "" {
		if q.BeforeAt, q.BeforeID, err = parseWorkspaceCursor(f.Before); err != nil {
			return nil, err
		}
	}
	// One more than the page holds says whether another page follows.
	fetch := q
	fetch.Limit++
	page, err := s.store.ListWorkspacePage(ctx, fetch)
	if err != nil {
		return nil, err
	}
	out := &WorkspaceList{Workspaces: page, Projects: map[string]*Project{}, Awaiting: map[string]bool{}}
	if len(page) > q.Limit {
		out.Workspaces = page[:q.Limit]
		last := out.Workspaces[q.Limit-1]
		out.Next = strconv.FormatInt(last.CreatedAt.UnixMicro(), 10) + "." + last.ID
	}
	ids := make([]string, len(out.Workspaces))
	for i, w := range out.Workspaces {
		ids[i] = w.ID
	}
	awaiting, err := s.store.AwaitingApproval(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range awaiting {
		out.Awaiting[id] = true
	}
	s.withTitles(out.Workspaces...)
	projects, err := s.store.ListProjects(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		out.Projects[p.ID] = p
	}
	return out, nil
}

// listableStates are the states a list can be filtered by.
var listableStates = []WorkspaceState{StateQueued, StateProvisioning, StateSetup, StateReady, StatePausing, StatePaused,
	StateResuming, StateArchiving, StateArchived, StateDeleting, StateFailed}

// parseWorkspaceCursor reads a list cursor: the microseconds of a workspace's creation
// and its id.
func parseWorkspaceCursor(c string) (time.Time, string, error) {
	at, id, ok := strings.Cut(c, ".")
	us, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || !ValidID(id, PrefixWorkspace) {
		return time.Time{}, "", Errorf(CodeInvalidRequest, "the page to show is not one this list gave")
	}
	return time.UnixMicro(us).UTC(), id, nil
}

// WorkspaceView is one workspace as its page shows it.
type WorkspaceView struct {
	Workspace *Workspace
	Project   *Project
	// Messages are the conversation's newest messages, oldest first; Earlier says
	// older ones exist.
	Messages *MessagePage
	Earlier  bool
	// Steps are the running turn's events so far (none between turns); Asks are its
	// approvals still waiting for a decision, with their whole input.
	Steps []*TurnEvent
	Asks  []*TurnEvent
	// Running is the running turn's Steps in words; Done are the steps of finished
	// turns among the newest events read, by turn id (a turn's reply shows them folded).
	Running []Step
	Done    map[string][]Step
	// Setup is the newest run of the environment's setup or update script while the
	// workspace is being set up or resumed, or when it failed: its output lines and,
	// when it ended, its setup_finished.
	Setup []*TurnEvent
	// Work is the branch's summary (app_work.go); PushRefusal the reason of a refused
	// last push, as its reply told it.
	Work        WorkSummary
	PushRefusal string
	// SetupLog is the end of the environment's newest setup or update run, when Setup
	// does not show it whole (nil: none).
	SetupLog *ScriptLog
	// Threads are the chat threads that drive it.
	Threads []*ChatThread
	// CanManage: the person may archive, unarchive and delete it (its starter, or an
	// owner).
	CanManage bool
	// WorkingSince is when the running turn's message went to the agent (nil: none).
	WorkingSince *time.Time
}

// Workspace reads one workspace's page: its status, the end of its conversation, and
// its running turn's steps and open questions.
func (s *AppWorkspaces) Workspace(ctx context.Context, a *AppSession, id string) (*WorkspaceView, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	ws, err := s.workspaces.GetWorkspace(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	v := &WorkspaceView{Workspace: ws, CanManage: a.mayManage(ws)}
	if v.Project, err = s.store.GetProject(ctx, acct.ID, ws.ProjectID); err != nil {
		return nil, err
	}
	after := max(0, ws.LatestSeq-conversationTail)
	if v.Messages, err = s.workspaces.ListMessages(ctx, acct, id, after, conversationTail); err != nil {
		return nil, err
	}
	v.Earlier = after > 0
	if msgs := v.Messages.Messages; ws.AgentStatus() == AgentWorking {
		for i := len(msgs) - 1; i >= 0; i-- {
			if m := msgs[i]; m.Role == RoleUser && m.Status == MessageDelivered {
				v.WorkingSince = m.DeliveredAt
				break
			}
		}
	}
	if v.Threads, err = s.store.ChatThreadsOf(ctx, ws.ID); err != nil {
		return nil, err
	}
	if ws.LastPush == PushRefused {
		v.PushRefusal = pushRefusal(v.Messages.Messages, ws.Branch)
	}
	v.Work = s.work(ctx, ws)
	if ws.EventSeq == 0 {
		return v, nil
	}
	events, err := s.workspaces.ListTurnEvents(ctx, acct, id, max(0, ws.EventSeq-stepsShown), stepsShown)
	if err != nil {
		return nil, err
	}
	if ws.AgentStatus() == AgentWorking {
		v.Steps, v.Asks = runningTurn(events)
		v.Running = StepsOf(v.Steps)
	}
	if ws.State == StateSetup || ws.State == StateResuming || ws.State == StateFailed {
		v.Setup = newestScriptRun(events)
	}
	if len(v.Setup) == 0 {
		if v.SetupLog, err = s.setupLog(ctx, acct, ws, events); err != nil {
			return nil, err
		}
	}
	v.Done = finishedSteps(events)
	return v, nil
}

// finishedSteps are the steps of each turn that finished among events, by turn id.
// The oldest turn may have begun before the first event read: its first steps are
// then missing, as the page says.
func finishedSteps(events []*TurnEvent) map[string][]Step {
	byTurn := map[string][]*TurnEvent{}
	var finished []string
	for _, e := range events {
		byTurn[e.TurnID] = append(byTurn[e.TurnID], e)
		if e.Type == EventTurnFinished {
			finished = append(finished, e.TurnID)
		}
	}
	out := map[string][]Step{}
	for _, turn := range finished {
		if steps := StepsOf(byTurn[turn]); len(steps) > 0 {
			out[turn] = steps
		}
	}
	return out
}

// newestScriptRun keeps the events of the newest environment script run.
func newestScriptRun(events []*TurnEvent) []*TurnEvent {
	run := ""
	for _, e := range events {
		if e.Type == EventSetupOutput || e.Type == EventSetupFinished {
			run = e.TurnID
		}
	}
	var out []*TurnEvent
	for _, e := range events {
		if run != "" && e.TurnID == run {
			out = append(out, e)
		}
	}
	return out
}

// runningTurn keeps the newest turn's events, and its asks nobody has answered yet.
func runningTurn(events []*TurnEvent) (steps, asks []*TurnEvent) {
	if len(events) == 0 {
		return nil, nil
	}
	turn := events[len(events)-1].TurnID
	answered := map[string]bool{}
	for _, e := range events {
		if e.TurnID != turn {
			continue
		}
		if e.Type == EventTurnFinished {
			return nil, nil // it ended: the reply says the rest
		}
		steps = append(steps, e)
		if e.Type == EventApprovalResolved {
			answered[e.ApprovalID] = true
		}
	}
	for _, e := range steps {
		if e.Type == EventApprovalRequested && !answered[e.ApprovalID] && e.ApprovalID != "" {
			asks = append(asks, e)
		}
	}
	return steps, asks
}

// mayManage: the member who started the workspace, or an owner.
func (a *AppSession) mayManage(ws *Workspace) bool {
	return a.Role == RoleOwner || ws.StartedBy != nil && ws.StartedBy.MemberID == a.Member.ID
}

// author is the session's member.
func (a *AppSession) author() *Author {
	return &Author{Kind: AuthorApp, ID: a.Member.ID, Name: authorName(a.Member.Name, a.Member.ID), MemberID: a.Member.ID}
}

// StartForm is what the start form offers: the account's projects, agents and
// runtime modes, and the defaults it fills in.
type StartForm struct {
	Projects     []*Project
	Agents       []string
	RuntimeModes []string
	// DefaultAgent and DefaultModel are those of the account's newest workspace.
	DefaultAgent, DefaultModel string
}

// StartForm reads what the start form offers.
func (s *AppWorkspaces) StartForm(ctx context.Context, a *AppSession) (*StartForm, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	projects, err := s.workspaces.ListProjects(ctx, acct)
	if err != nil {
		return nil, err
	}
	f := &StartForm{Projects: projects, Agents: s.workspaces.ListAgents(ctx, acct), RuntimeModes: RuntimeModes}
	if ws, err := s.store.NewestWorkspace(ctx, acct.ID); err == nil {
		f.DefaultAgent, f.DefaultModel = ws.Agent, ws.Model
	}
	return f, nil
}

// Start starts a workspace as the member: in.Origin and its author are the app's.
// in's key, from the form, makes a form sent twice start one workspace.
func (s *AppWorkspaces) Start(ctx context.Context, a *AppSession, in CreateWorkspaceInput) (*Workspace, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	in.Origin, in.author, in.thread = OriginApp, a.author(), nil
	ws, _, err := s.workspaces.CreateWorkspace(ctx, acct, in)
	return ws, err
}

// Send sends a message to the workspace as the member, with the files uploaded for
// it; key makes a form sent twice one message.
func (s *AppWorkspaces) Send(ctx context.Context, a *AppSession, id, text string, attachments []string, key string) (*SendReceipt, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	in := SendMessageInput{Text: &text, Attachments: attachments, author: a.author()}
	if key != "" {
		in.HeaderKey = &key
	}
	return s.workspaces.SendMessage(ctx, acct, id, in)
}

// Upload stores a file for the workspace's next message, as the API's upload does
// (the same checks of its type, size and name; in.HeaderKey makes a retry one file).
func (s *AppWorkspaces) Upload(ctx context.Context, a *AppSession, id string, in UploadInput) (*Asset, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.workspaces.UploadAttachment(ctx, acct, id, in)
}

// File reads one of the workspace's files (an attachment of one of its messages).
func (s *AppWorkspaces) File(ctx context.Context, a *AppSession, id, assetID string) (*Asset, []byte, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	ws, err := s.workspaces.GetWorkspace(ctx, acct, id)
	if err != nil {
		return nil, nil, err
	}
	if !ValidID(assetID, PrefixAsset) {
		return nil, nil, Errorf(CodeAssetNotFound, "no such file in this workspace")
	}
	found, err := s.store.AssetsByID(ctx, ws.ID, []string{assetID})
	if err != nil {
		return nil, nil, err
	}
	if len(found) != 1 {
		return nil, nil, Errorf(CodeAssetNotFound, "no such file in this workspace")
	}
	data, err := readAttachment(ctx, s.kernel, s.blobs, found[0])
	return found[0], data, err
}

// Decide allows or denies one of the workspace's approvals as the member.
func (s *AppWorkspaces) Decide(ctx context.Context, a *AppSession, id, approvalID, decision string) (*Approval, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.workspaces.decideAs(ctx, acct, id, approvalID, decision, *a.author())
}

// Stop asks for the workspace's turn to be stopped.
func (s *AppWorkspaces) Stop(ctx context.Context, a *AppSession, id, turnID string) error {
	acct, err := s.account(ctx, a)
	if err != nil {
		return err
	}
	_, err = s.workspaces.StopTurn(ctx, acct, id, turnID)
	return err
}

// OpenPullRequest is the Open pull request action, for any member (it drives the
// workspace, as a message does).
func (s *AppWorkspaces) OpenPullRequest(ctx context.Context, a *AppSession, id string) (*Workspace, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.workspaces.OpenPullRequest(ctx, acct, id)
}

// Archive, Unarchive and Delete move a workspace for the member who started it or an
// owner.
func (s *AppWorkspaces) Archive(ctx context.Context, a *AppSession, id string) (*Workspace, error) {
	if err := s.mayManage(ctx, a, id); err != nil {
		return nil, err
	}
	return archiveWorkspace(ctx, s.store, s.clock, id)
}

// Unarchive moves an archived workspace back to work (see Archive).
func (s *AppWorkspaces) Unarchive(ctx context.Context, a *AppSession, id string) (*Workspace, error) {
	if err := s.mayManage(ctx, a, id); err != nil {
		return nil, err
	}
	return moveWorkspace(ctx, s.store, s.clock, id, unarchivableFrom, StateResuming)
}

// Delete deletes a workspace (see Archive).
func (s *AppWorkspaces) Delete(ctx context.Context, a *AppSession, id string) (*Workspace, error) {
	if err := s.mayManage(ctx, a, id); err != nil {
		return nil, err
	}
	return moveWorkspace(ctx, s.store, s.clock, id, nil, StateDeleting)
}

// mayManage checks the workspace is the account's and the person may move it.
func (s *AppWorkspaces) mayManage(ctx context.Context, a *AppSession, id string) error {
	acct, err := s.account(ctx, a)
	if err != nil {
		return err
	}
	ws, err := s.workspaces.GetWorkspace(ctx, acct, id)
	if err != nil {
		return err
	}
	if !a.mayManage(ws) {
		return Errorf(CodeOwnerRequired, "only the person who started this workspace, or an owner, may do that")
	}
	return nil
}

// Events streams the workspace's turn events after afterSeq, for its page's live
// updates; the pages it reads itself wait on pace (nil: no pace), the member's.
func (s *AppWorkspaces) Events(ctx context.Context, a *AppSession, id string, afterSeq int64, pace Pacer) (*EventStream, error) {
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.workspaces.StreamEvents(ctx, acct, id, afterSeq, pace)
}
