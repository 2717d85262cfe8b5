package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Forge events: a forge's webhooks are a third chat surface. An event is a chat event
// of the platform named by the forge's kind, through the same inbox (dedupe by the
// forge's delivery id, a leased queue); an issue is a thread, its place
// ChatPlace{Platform: kind, TeamID: project id, ChannelID: repository key, ThreadID:
// issue number}; what the hub says there goes out through the chat outboxes, as one
// comment it edits in place.

// DefaultForgeHandle is the handle that asks for work in a comment when the project
// names none.
const DefaultForgeHandle = "@wshub"

// ForgeHook is a project's forge events setting: who may send it events (those who
// sign with its secret), and the handle that asks for work.
type ForgeHook struct {
	ProjectID, AccountID string
	Forge                string
	// RepositoryKey is the project's repository as events name it (RepositoryKey).
	RepositoryKey string
	Handle        string
	// TriggerLabel, given to an issue, starts a workspace with the issue as the prompt
	// ("": none).
	TriggerLabel string
	// FixChecks is how many failed checks of a workspace's pull request become its
	// follow-ups (0: none).
	FixChecks    int
	SealedSecret []byte
	UpdatedAt    time.Time
}

// ForgeEventQueries are the store statements of forge events.
type ForgeEventQueries interface {
	PutForgeHook(ctx context.Context, h *ForgeHook) error
	GetForgeHook(ctx context.Context, projectID string) (*ForgeHook, error)
	DeleteForgeHook(ctx context.Context, projectID string) error
	// ForgeHooksOf lists the hooks of the projects (not removed) on forge whose
	// repository is key.
	ForgeHooksOf(ctx context.Context, forge, key string) ([]*ForgeHook, error)
	// ForgeComment is the ref of the hub's comment in a forge thread (ErrNoRows: none).
	ForgeComment(ctx context.Context, place ChatPlace) (string, error)
	SetForgeComment(ctx context.Context, place ChatPlace, ref string) error
	// WorkspaceOfPull is the newest workspace (not deleted) of the project whose pull
	// request is number (ErrNoRows: none).
	WorkspaceOfPull(ctx context.Context, projectID string, number int64) (string, error)
	// PullOfCommit is the pull request number of the newest workspace (not deleted) of
	// the project whose head commit is sha and which has one (ErrNoRows: none).
	PullOfCommit(ctx context.Context, projectID, sha string) (int64, error)
	// ForgeCheckFixes are the failed checks taken on a project's pull request, by key:
	// true for a fix sent, false for the limit said.
	ForgeCheckFixes(ctx context.Context, projectID string, pull int64) (map[string]bool, error)
	// AddForgeCheckFix records one (a key recorded before stays as it is).
	AddForgeCheckFix(ctx context.Context, projectID string, pull int64, key string, fix bool, at time.Time) error
}

// ForgeCommenter comments on a project's issues; a forge adapter that is not one
// cannot answer events.
type ForgeCommenter interface {
	// PostIssueComment comments on issue number of p's repository and returns the
	// comment's ref.
	PostIssueComment(ctx context.Context, p *Project, issue int64, body string) (string, error)
	// EditIssueComment makes comment ref of the issue say body.
	EditIssueComment(ctx context.Context, p *Project, issue int64, ref, body string) error
}

// ForgeSignature is what a forge front-end read of a delivery before trusting it: the
// event's name, the repository the payload names (its URLs), and a check of the
// delivery's signature against a secret.
type ForgeSignature struct {
	Event        string
	Repositories []string
	// Installation is the GitHub App installation that sent it (0: none).
	Installation int64
	Verify       func(secret []byte) bool
}

// ForgeAcceptance is what became of a delivery.
type ForgeAcceptance int

const (
	// ForgeAccepted: stored for the inbox worker.
	ForgeAccepted ForgeAcceptance = iota
	// ForgeRedelivered: the delivery id was seen before; nothing more to do.
	ForgeRedelivered
	// ForgeUnknownRepository: no project takes events from the repository.
	ForgeUnknownRepository
	// ForgeUnverified: a project has the repository, but the signature matches none of
	// their secrets. Nothing is stored.
	ForgeUnverified
	// ForgeUnknownInstallation: a GitHub App's installation no account has, and no
	// project's own secret verifies it. Nothing is stored.
	ForgeUnknownInstallation
)

// ForgeEnvelope is a verified delivery as the inbox keeps it: which project's secret
// verified it, the forge's event name, and the body as received.
type ForgeEnvelope struct {
	ProjectID string          `json:"projectId"`
	Event     string          `json:"event"`
	Body      json.RawMessage `json:"body"`
}

// ForgeSession is a forge thread's session: the project's account acting through a
// binding made from the project, and the project's handle.
type ForgeSession struct {
	*ChatSession
	Handle, TriggerLabel string
	FixChecks            int
}

// StartedBy reports whether the thread's workspace was started by the message of key:
// a forge may send the same comment again under a new delivery id (a replay), which
// must not become a second message of the workspace it started.
func (s *ForgeSession) StartedBy(key string) bool {
	return s.Thread != nil && s.Thread.WorkspaceID == DerivedID(PrefixWorkspace, s.Account.ID, scopeCreate(), strings.TrimSpace(key))
}

// ForgeEvents are the forge front-end's use cases: deliveries in, sessions of issues,
// and the hub's one comment in each.
type ForgeEvents struct {
	kernel
	logger
	store  forgeEventsStore
	forges Forges
	access *forgeAccessCache
}

// forgeEventsStore is what ForgeEvents reads and writes.
type forgeEventsStore interface {
	TxStore
	AccountQueries
	ProjectQueries
	RuntimeQueries
	ChatQueries
	ForgeEventQueries
	ForgeReviewQueries
	GitHubAppQueries
}

// AcceptForgeEvent finds the projects of the repository a delivery names, checks its
// signature against each one's secret, and stores it for the inbox worker under the
// first that verifies it (in.Payload is the body; in.EventID the forge's delivery id).
// A GitHub App's delivery whose installation is an account's is checked against that
// account's App instead, and stored under the account's project of the repository.
// Nothing is stored for an unknown repository or installation, or a signature that
// matches no secret.
func (s *ForgeEvents) AcceptForgeEvent(ctx context.Context, in ChatArrival, sig ForgeSignature) (ForgeAcceptance, error) {
	if in.EventID == "" {
		return ForgeUnverified, Errorf(CodeInvalidRequest, "the delivery has no id")
	}
	if sig.Installation != 0 && in.Platform == ForgeGitHub {
		app, err := s.store.GitHubAppOfInstallation(ctx, sig.Installation)
		if err == nil {
			return s.acceptAppEvent(ctx, in, sig, app)
		}
		if !errors.Is(err, ErrNoRows) {
			return ForgeUnverified, err
		}
		// An installation no account has: a project may still hold the App's secret
		// as its own (how an App's events were taken before accounts had Apps). Else
		// it is answered as an unknown repository is, so that the App's deliveries
		// do not fail on GitHub's side for an installation this hub does not serve.
		got, err := s.acceptByRepository(ctx, in, sig)
		if got == ForgeUnknownRepository || got == ForgeUnverified && err == nil {
			return ForgeUnknownInstallation, nil
		}
		return got, err
	}
	return s.acceptByRepository(ctx, in, sig)
}

// acceptByRepository stores a delivery under the first project of its repository
// whose own secret verifies it.
func (s *ForgeEvents) acceptByRepository(ctx context.Context, in ChatArrival, sig ForgeSignature) (ForgeAcceptance, error) {
	hooks, err := s.hooksOf(ctx, in.Platform, sig.Repositories)
	if err != nil {
		return ForgeUnverified, err
	}
	verifiable := false
	for _, h := range hooks {
		if h.SealedSecret == nil {
			continue // the project takes its account's GitHub App's events only
		}
		verifiable = true
		secret, err := s.open(h.SealedSecret, SealedForgeSecret.binding(h.AccountID, h.ProjectID))
		if err != nil {
			return ForgeUnverified, err
		}
		if sig.Verify([]byte(secret)) {
			return s.keep(ctx, in, sig, h)
		}
	}
	if !verifiable {
		return ForgeUnknownRepository, nil
	}
	return ForgeUnverified, nil
}

// hooksOf are the forge events settings of the projects of the first of repos that
// has any.
func (s *ForgeEvents) hooksOf(ctx context.Context, forge string, repos []string) ([]*ForgeHook, error) {
	for _, repo := range repos {
		key := RepositoryKey(repo)
		if key == "" {
			continue
		}
		found, err := s.store.ForgeHooksOf(ctx, forge, key)
		if err != nil || len(found) > 0 {
			return found, err
		}
	}
	return nil, nil
}

// keep stores a verified delivery for the inbox worker under h's project.
func (s *ForgeEvents) keep(ctx context.Context, in ChatArrival, sig ForgeSignature, h *ForgeHook) (ForgeAcceptance, error) {
	env, err := json.Marshal(ForgeEnvelope{ProjectID: h.ProjectID, Event: sig.Event, Body: in.Payload})
	if err != nil {
		return ForgeUnverified, Errorf(CodeInvalidRequest, "the body is not JSON")
	}
	in.Payload = env
	fresh, err := s.acceptChatEvent(ctx, s.store, in)
	if err != nil || !fresh {
		return ForgeRedelivered, err
	}
	return ForgeAccepted, nil
}

// ForgeSessionFor resolves who acts in a forge thread: the project's account (which
// must be entitled), through a binding made from the project, and the thread's
// workspace when it has one.
func (s *ForgeEvents) ForgeSessionFor(ctx context.Context, place ChatPlace) (*ForgeSession, error) {
	h, err := s.store.GetForgeHook(ctx, place.TeamID)
	if err != nil {
		return nil, notFound(err, CodeProjectNotFound, "the project no longer takes forge events")
	}
	acct, err := s.store.GetAccount(ctx, h.AccountID)
	if err != nil {
		return nil, notFound(err, CodeProjectNotFound, "the project's account no longer exists")
	}
	b := &ChatBinding{Platform: place.Platform, TeamID: place.TeamID, AccountID: acct.ID, ProjectID: h.ProjectID}
	sess := &ForgeSession{ChatSession: &ChatSession{Place: place, Binding: b, Account: acct}, Handle: h.Handle, TriggerLabel: h.TriggerLabel,
		FixChecks: h.FixChecks}
	if err := acct.checkEntitled(); err != nil {
		return sess, err
	}
	if sess.Thread, err = s.store.GetChatThread(ctx, place); err != nil && !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	return sess, nil
}

// ShowForgeComment makes the hub's one comment in a forge thread say text, posting it
// the first time, and returns its ref. When the thread's workspace has a pull request,
// the comment ends with its link.
func (s *ForgeEvents) ShowForgeComment(ctx context.Context, place ChatPlace, text string) (string, error) {
	p, err := s.store.GetProjectByID(ctx, place.TeamID)
	if err != nil {
		return "", notFound(err, CodeProjectNotFound, "no such project")
	}
	forge := s.forges[place.Platform]
	if forge == nil {
		return "", fmt.Errorf("forge %q cannot comment", place.Platform)
	}
	// A pull request's own thread needs no link to itself.
	if t, err := s.store.GetChatThread(ctx, place); err == nil && !strings.HasPrefix(place.ThreadID, pullThreadPrefix) {
		ws, err := s.store.GetWorkspaceByID(ctx, t.WorkspaceID)
		if err == nil && ws.Pull.URL != "" && !strings.HasSuffix(strings.TrimSpace(text), ws.Pull.URL) {
			text += "\n\nPull request: " + ws.Pull.URL
		}
	}
	text += "\n\n" + ForgeCommentMark
	if err := s.openCredential(ctx, p); err != nil {
		return "", err
	}
	ref, err := s.store.ForgeComment(ctx, place)
	switch {
	case err == nil:
		return postForgeComment(ctx, forge, p, place.ThreadID, ref, text)
	case !errors.Is(err, ErrNoRows):
		return "", err
	}
	if ref, err = postForgeComment(ctx, forge, p, place.ThreadID, "", text); err != nil {
		return "", err
	}
	return ref, s.store.SetForgeComment(context.WithoutCancel(ctx), place, ref)
}

// ShowForgeStatus is ShowForgeComment for a running turn's status: once the turn has
// finished, its reply is what the comment shows, and a status edit that comes late
// (claimed before the turn ended) leaves it be. Between this check and the edit a
// reply can still land first; the window is one forge call.
func (s *ForgeEvents) ShowForgeStatus(ctx context.Context, place ChatPlace, turnID, text string) (string, error) {
	t, err := s.store.GetChatThread(ctx, place)
	if err != nil {
		return "", notFound(err, CodeChatNoWorkspace, "this issue has no workspace")
	}
	ws, err := s.store.GetWorkspaceByID(ctx, t.WorkspaceID)
	if err != nil {
		return "", err
	}
	if ws.LastTurnID == turnID {
		ref, err := s.store.ForgeComment(ctx, place)
		return ref, err
	}
	return s.ShowForgeComment(ctx, place, text)
}

// ForgeCommentMark ends every comment of the hub's, so that the events of its own
// comments (and another hub's) are known and ignored: two hubs never loop.
const ForgeCommentMark = "<!-- wshub -->"
