package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// RuntimeAPI is the runtime API's use cases: what `wshub runtime`, on a workspace's
// machine, calls with its token. A runtime process names itself with a session id
// (random per process); hello makes it the workspace's runtime, and every later call
// from another session is refused, so a process that was replaced cannot record
// anything. Every call can be retried: a report lost with the connection records once.
type RuntimeAPI struct {
	rt *Worker
	// imports holds a place per commits upload being taken (hub-wide limit); one
	// workspace's uploads take turns in the Branches adapter.
	imports chan struct{}
}

// DefaultMaxConcurrentImports is the hub-wide limit on commit uploads taken at once.
const DefaultMaxConcurrentImports = 2

func newRuntimeAPI(rt *Worker) *RuntimeAPI {
	n := rt.config.MaxConcurrentImports
	if n <= 0 {
		n = DefaultMaxConcurrentImports
	}
	return &RuntimeAPI{rt: rt, imports: make(chan struct{}, n)}
}

// replyRuntimeRestarted ends a turn whose runtime process was replaced mid-turn (it
// crashed, or its machine was restarted): nobody will report it.
const replyRuntimeRestarted = "The turn was interrupted: the workspace's runtime restarted while the agent was working."

// RuntimeCaller is who calls the runtime API: the workspace's runtime token, and the
// session id the runtime process named itself with at hello. It is the runtime API's
// scope, as an account is the REST API's.
type RuntimeCaller struct {
	Token   string
	Session string
}

// sessionPattern: a runtime session id is short and plain (it is logged and stored).
var sessionPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// runtimeWorking are the states whose machine runs: its runtime may call.
func runtimeWorking(s WorkspaceState) bool {
	return s == StateProvisioning || s == StateSetup || s == StateResuming || s == StateReady
}

// locked authenticates a runtime's token and runs fn on its workspace, locked, in one
// transaction. With session set, only that runtime process may call (hello passes "").
func (r *RuntimeAPI) locked(ctx context.Context, rc RuntimeCaller, fn func(q Queries, ws *Workspace) error) error {
	if len(rc.Token) < 10 || len(rc.Token) > 200 {
		return Errorf(CodeRuntimeTokenInvalid, "the runtime token is unknown or revoked")
	}
	hash := HashAPIKey(rc.Token)
	return r.rt.store.InTx(ctx, func(q Queries) error {
		ws, err := q.LockWorkspaceByRuntimeToken(ctx, hash)
		if errors.Is(err, ErrNoRows) {
			return Errorf(CodeRuntimeTokenInvalid, "the runtime token is unknown or revoked")
		}
		if err != nil {
			return contended(err)
		}
		if rc.Session != "" && ws.RuntimeSession != rc.Session {
			return Errorf(CodeRuntimeSuperseded, "another runtime process of the workspace said hello after this one")
		}
		if !runtimeWorking(ws.State) {
			return Errorf(CodeRuntimeStopped, "the workspace is %s", ws.State)
		}
		return fn(q, ws)
	})
}

// caller authenticates a runtime call and returns its workspace, and its project when
// withProject is set.
func (r *RuntimeAPI) caller(ctx context.Context, rc RuntimeCaller, withProject bool) (ws *Workspace, p *Project, err error) {
	err = r.locked(ctx, rc, func(q Queries, cur *Workspace) error {
		ws = cur
		if withProject {
			var err error
			p, err = q.GetProject(ctx, cur.AccountID, cur.ProjectID)
			return err
		}
		return nil
	})
	return ws, p, err
}

// Hello makes the calling process the workspace's runtime and returns what it needs to
// run it. A new process ends the turn its predecessor left unfinished (interrupted),
// in the same transaction, so the queue moves on; a hello retried by the same process
// changes nothing. A provisioning workspace moves to setup: its machine is up.
func (r *RuntimeAPI) Hello(ctx context.Context, rc RuntimeCaller) (*RuntimeInstructions, error) {
	if !sessionPattern.MatchString(rc.Session) {
		return nil, Errorf(CodeInvalidRequest, "session must be 8 to 64 letters, digits, '-' or '_'")
	}
	var out *RuntimeInstructions
	err := r.locked(ctx, RuntimeCaller{Token: rc.Token}, func(q Queries, ws *Workspace) error {
		now := r.rt.clock.Now()
		if ws.RuntimeSession != rc.Session {
			m, err := q.OldestOpenMessage(ctx, ws.ID)
			switch {
			case errors.Is(err, ErrNoRows):
			case err != nil:
				return err
			case m.Status == MessageDelivered:
				r.rt.log().Warn("a new runtime process ends the turn its predecessor left unfinished",
					"workspace", ws.ID, "turn", m.TurnID)
				if err := r.rt.recordTurnIn(ctx, q, ws, m, TurnResult{Outcome: OutcomeInterrupted, Reply: replyRuntimeRestarted}); err != nil {
					return err
				}
			}
		}
		if err := q.TouchRuntime(ctx, ws.ID, rc.Session, now, true); err != nil {
			return err
		}
		if ws.State == StateProvisioning {
			change := changeTo(StateSetup, "", now)
			if _, err := setState(ctx, q, ws.ID, ws.State, change); err != nil {
				return err
			}
			change.apply(ws)
		}
		// Fail closed: a project that cannot be read gives no network.
		network := NetworkNone
		if p, err := q.GetProject(ctx, ws.AccountID, ws.ProjectID); err == nil {
			network = p.Network
		}
		out = &RuntimeInstructions{WorkspaceID: ws.ID, State: ws.State, Agent: ws.Agent, Model: ws.Model,
			RuntimeMode: ws.RuntimeMode, Branch: ws.Branch, Network: network, TurnTimeout: r.rt.config.TurnTimeout,
			Size: r.rt.sizeOf(ctx, ws)}
		return nil
	})
	return out, err
}

// Heartbeat records that the runtime is alive (a turn can outlast any other call)
// and tells it the workspace's state; a stopping workspace answers runtime_stopped.
func (r *RuntimeAPI) Heartbeat(ctx context.Context, rc RuntimeCaller) (WorkspaceState, error) {
	var state WorkspaceState
	err := r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
		state = ws.State
		return q.TouchRuntime(ctx, ws.ID, rc.Session, r.rt.clock.Now(), false)
	})
	return state, err
}

// Checkout writes a git bundle of the workspace's branch to w: as the last turn left
// it, or, the first time, a new branch from baseRef in the project's freshly fetched
// mirror (a baseRef it lacks fails the workspace, as on the local provider).
func (r *RuntimeAPI) Checkout(ctx context.Context, rc RuntimeCaller, w io.Writer) (head string, err error) {
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return "", err
	}
	if r.rt.branches == nil {
		return "", Errorf(CodeServiceUnavailable, "this hub keeps no branches for remote runtimes")
	}
	if p.State != ProjectReady {
		return "", r.failRemote(ctx, rc.Token, ws, FailureStatus(FailureSetup, ReasonProjectNotReady), "the project has no mirror")
	}
	if err := r.rt.forHub(ctx, p, r.rt.mirror); err != nil {
		return "", err
	}
	if err := r.rt.mirror.Refresh(ctx, p, r.rt.config.MirrorMaxAge); err != nil && ctx.Err() == nil {
		r.rt.log().Warn("mirror fetch failed; the workspace starts from the mirror as it is", "workspace", ws.ID, "err", err)
	}
	head, err = r.rt.branches.Bundle(ctx, ws, p, w)
	if errors.Is(err, ErrBaseRefNotFound) {
		return "", r.failRemote(ctx, rc.Token, ws, FailureStatus(FailureSetup, ReasonBaseRefNotFound),
			fmt.Sprintf("baseRef %q is not a branch, tag or commit of the repository", ws.BaseRef))
	}
	return head, err
}

// SetupFailed fails a setting-up workspace whose runtime could not make its checkout
// (setup_failed:checkout, detail as the statusDetail, capped). A workspace past setup
// is left as it is.
func (r *RuntimeAPI) SetupFailed(ctx context.Context, rc RuntimeCaller, detail string) error {
	ws, _, err := r.caller(ctx, rc, false)
	if err != nil {
		return err
	}
	detail, _ = capRunes(strings.ToValidUTF8(strings.TrimSpace(detail), "\uFFFD"), MaxFailureMessageChars)
	err = r.failRemote(ctx, rc.Token, ws, FailureStatus(FailureSetup, ReasonCheckout), detail)
	var ce *Error
	if errors.As(err, &ce) && ce.Code == CodeRuntimeStopped {
		return nil // failed, as asked
	}
	return err
}

// failRemote fails a starting remote workspace (its runtime is told runtime_stopped).
func (r *RuntimeAPI) failRemote(ctx context.Context, token string, ws *Workspace, statusCode, detail string) error {
	err := r.rt.store.InTx(ctx, func(q Queries) error {
		cur, err := q.LockWorkspaceByRuntimeToken(ctx, HashAPIKey(token))
		if err != nil {
			return err
		}
		if cur.State != StateSetup && cur.State != StateProvisioning {
			return nil
		}
		_, err = r.rt.failMachine(ctx, q, cur, statusCode, detail)
		return err
	})
	if err != nil {
		return err
	}
	return Errorf(CodeRuntimeStopped, "the workspace failed: %s", detail)
}

// Ready says the checkout is in place: a setting-up or resuming workspace becomes
// ready and its runtime online.
func (r *RuntimeAPI) Ready(ctx context.Context, rc RuntimeCaller) error {
	return r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
		now := r.rt.clock.Now()
		if ws.State == StateSetup || ws.State == StateResuming {
			change := changeTo(StateReady, "", now)
			if ws.State == StateSetup {
				// What of the environment the machine did not apply (Environment).
				if b, err := q.WorkspaceEnvironment(ctx, ws.ID); err == nil && len(b) > 0 {
					var k keptEnvironment
					if json.Unmarshal(b, &k) == nil {
						change.StatusDetail = k.Notes
					}
				}
			}
			if _, err := setState(ctx, q, ws.ID, ws.State, change); err != nil {
				return err
			}
			ws.State = StateReady
		}
		if ws.State != StateReady {
			return Errorf(CodeRuntimeStopped, "the workspace is %s, not setting up", ws.State)
		}
		if err := q.TouchRuntime(ctx, ws.ID, rc.Session, now, false); err != nil {
			return err
		}
		return wake(ctx, q, WorkChannel, ws.ID)
	})
}

// remotePoll is how often a long poll looks at the store on a hub without wake-ups;
// remoteSafetyPoll with them.
const (
	remotePoll       = 2 * time.Second
	remoteSafetyPoll = 10 * time.Second
)

// NextTurn hands the runtime the workspace's next turn: the oldest open user message,
// moved to delivered. A message already delivered is handed again: this session asked
// before and lost the answer (hello ended any older session's). With no message it
// waits up to wait for one, and returns nil.
func (r *RuntimeAPI) NextTurn(ctx context.Context, rc RuntimeCaller, wait time.Duration) (*RuntimeTurn, error) {
	deadline := time.Now().Add(wait)
	var turn *RuntimeTurn
	var wsID string
	look := func(touch bool) (bool, time.Duration, error) {
		err := r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
			wsID = ws.ID
			if touch { // one write per poll, not per look
				if err := q.TouchRuntime(ctx, ws.ID, rc.Session, r.rt.clock.Now(), false); err != nil {
					return err
				}
			}
			if ws.State != StateReady {
				return nil
			}
			var err error
			turn, err = r.takeTurn(ctx, q, ws)
			return err
		})
		return turn != nil, 0, err
	}
	// The first look names the workspace to watch; the watch's own first look then
	// sees a message that came before it began.
	if done, _, err := look(true); done || err != nil {
		if turn == nil || err != nil {
			return turn, err
		}
		return turn, r.withEnvironment(ctx, rc, turn)
	}
	// Woken by NOTIFY (and all at once when the LISTEN connection comes back), an idle
	// poll looks again only every remoteSafetyPoll, in case the hub has no LISTEN
	// connection at all; without wake-ups, every remotePoll.
	poll := remoteSafetyPoll
	if r.rt.wake == nil {
		poll = remotePoll
	}
	w := watchKey(r.rt.wake, WorkChannel, wsID, poll)
	defer w.Close()
	_, err := w.until(ctx, deadline, func() (bool, time.Duration, error) { return look(false) })
	if turn == nil || err != nil {
		return turn, err
	}
	return turn, r.withEnvironment(ctx, rc, turn)
}

// withEnvironment gives a turn its workspace environment's variables and the
// project's secrets marked for the agent.
func (r *RuntimeAPI) withEnvironment(ctx context.Context, rc RuntimeCaller, turn *RuntimeTurn) error {
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return err
	}
	turn.Env, _, err = environments{r.rt}.turnEnvironment(ctx, ws, p)
	return err
}

// takeTurn claims the oldest open message of a ready workspace for its runtime.
func (r *RuntimeAPI) takeTurn(ctx context.Context, q Queries, ws *Workspace) (*RuntimeTurn, error) {
	m, err := q.OldestOpenMessage(ctx, ws.ID)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if m.Status == MessagePending {
		if _, err := q.MarkDelivered(ctx, m.ID, r.rt.clock.Now()); err != nil {
			return nil, err
		}
		if !m.StopRequested {
			if err := r.rt.in(ctx, q).chatStatuses(ws.ID, m.TurnID, false); err != nil {
				return nil, err
			}
		}
	}
	if m.StopRequested {
		// Stopped before it started: it ends here, and the next poll takes the next.
		return nil, r.rt.recordTurnIn(ctx, q, ws, m, TurnResult{Outcome: OutcomeInterrupted, Reply: replyStopped})
	}
	prompt, err := r.rt.open(m.SealedText, SealedMessageText.binding(ws.ID, m.ID))
	if err != nil {
		return nil, err
	}
	coAuthor, err := coAuthorOf(ctx, q, m)
	if err != nil {
		return nil, err
	}
	turn := &RuntimeTurn{TurnID: m.TurnID, MessageID: m.ID, Seq: m.Seq, Prompt: string(prompt), SessionID: ws.AgentSession,
		CoAuthor: coAuthor}
	if len(m.AssetIDs) > 0 {
		assets, err := q.AssetsByID(ctx, ws.ID, m.AssetIDs)
		if err != nil {
			return nil, err
		}
		for _, a := range assets {
			turn.Attachments = append(turn.Attachments, RuntimeAttachment{ID: a.ID, Name: a.OriginalName, Size: a.SizeBytes})
		}
	}
	return turn, nil
}

// Attachment returns a file of the workspace's messages, opened.
func (r *RuntimeAPI) Attachment(ctx context.Context, rc RuntimeCaller, assetID string) ([]byte, error) {
	ws, _, err := r.caller(ctx, rc, false)
	if err != nil {
		return nil, err
	}
	assets, err := r.rt.store.AssetsByID(ctx, ws.ID, []string{assetID})
	if err != nil {
		return nil, err
	}
	if len(assets) == 0 {
		return nil, Errorf(CodeAssetNotFound, "no attachment %s in this workspace", assetID)
	}
	return readAttachment(ctx, r.rt.kernel, r.rt.blobs, assets[0])
}

// UploadCommits adds a turn's commits (a git bundle of the branch since the head the
// runtime was given) to the hub's copy of the branch and returns its new head.
func (r *RuntimeAPI) UploadCommits(ctx context.Context, rc RuntimeCaller, bundle io.Reader) (string, error) {
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return "", err
	}
	if r.rt.branches == nil {
		return "", Errorf(CodeServiceUnavailable, "this hub keeps no branches for remote runtimes")
	}
	if err := r.rt.forHub(ctx, p, r.rt.mirror); err != nil {
		return "", err
	}
	select {
	case r.imports <- struct{}{}:
		defer func() { <-r.imports }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	head, err := r.rt.branches.Import(ctx, ws, p, bundle)
	if err != nil {
		// git's own words name the hub's paths: they go to the log, and the runtime
		// gets the adapter's fixed sentence, or a fixed one.
		r.rt.log().Warn("commits upload refused", "workspace", ws.ID, "err", err)
		var ce *Error
		if errors.As(err, &ce) {
			return "", ce
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", Errorf(CodeInternal, "the commits could not be taken")
	}
	return head, nil
}

// inFlight returns the user message of turnID when it is the workspace's turn in
// flight (its oldest open message, delivered); nil when the turn ended or is not the
// one running.
func inFlight(ctx context.Context, q Queries, workspaceID, turnID string) (*StoredMessage, error) {
	m, err := q.OldestOpenMessage(ctx, workspaceID)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil || m.TurnID != turnID || m.Status != MessageDelivered {
		return nil, err
	}
	return m, nil
}

// ReportTurn records the runtime's turn exactly as a local turn is recorded: the
// assistant message, the settled user message, lastTurn, the webhook event and the
// chat replies, in one transaction. The branch is pushed first when the project asks
// for it. A turn that is no longer the one in flight (recorded by an earlier attempt
// of this report) records nothing: recorded is false.
func (r *RuntimeAPI) ReportTurn(ctx context.Context, rc RuntimeCaller, turnID string, rep RuntimeReport) (recorded bool, err error) {
	if err := rep.check(); err != nil {
		return false, err
	}
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return false, err
	}
	// The project's secrets never reach the conversation, whatever the agent printed.
	_, secrets, err := environments{r.rt}.secretsFor(ctx, ws, p, secretsForAgent)
	if err != nil {
		return false, err
	}
	mask := NewMasker(secrets)
	rep.Reply, rep.FailureMessage = mask.Mask(rep.Reply), mask.Mask(rep.FailureMessage)
	if rep.Committed {
		// The commit reported is the one the hub took, not the runtime's word for it.
		held := ""
		if r.rt.branches != nil {
			if held, err = r.rt.branches.Head(ctx, ws); err != nil {
				return false, err
			}
		}
		if rep.Head != held {
			return false, Errorf(CodeInvalidRequest, "commit.head is not the head of the branch the hub holds: upload the commits first")
		}
	}
	tc := TurnCommit{Committed: rep.Committed, SHA: rep.Head, Files: rep.Files, Insertions: rep.Insertions, Deletions: rep.Deletions,
		LeftOut: strings.Join(rep.LeftOut, "\n"), Failed: rep.CommitFailed && !rep.Committed}
	if rep.Committed && p.Push && r.rt.branches != nil {
		err := r.rt.forHub(ctx, p, r.rt.mirror)
		if err == nil {
			err = r.rt.branches.Push(ctx, ws, p)
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			tc.PushRefused, tc.PushError = true, err.Error()
		} else {
			tc.Pushed = true
			pull, note := r.rt.pulls.afterPush(ctx, ws, p)
			tc.Pull, tc.PullNote, tc.OfferPull = pull, note, r.rt.pulls.offered(ws, p)
		}
	}
	result := TurnResult{Outcome: rep.Outcome, Reply: rep.Reply, SessionID: rep.SessionID,
		FailureCode: rep.FailureCode, FailureMessage: rep.FailureMessage, Commit: tc}
	err = r.locked(ctx, rc, func(q Queries, cur *Workspace) error {
		m, err := inFlight(ctx, q, cur.ID, turnID)
		if m == nil || err != nil {
			return err
		}
		recorded = true
		return r.rt.recordTurnIn(ctx, q, cur, m, result)
	})
	if err != nil || !recorded {
		return false, err
	}
	r.rt.reportTurn(TurnReport{WorkspaceID: ws.ID, TurnID: turnID, Agent: ws.Agent, Outcome: rep.Outcome,
		FailureCode: rep.FailureCode, Commit: tc})
	return true, nil
}

// MaxEventsBatch bounds one batch of a remote runtime's turn events
// (runtimewire.MaxEventsBatch on the wire).
const MaxEventsBatch = 200

// TurnEvents adds a batch of the running turn's events, from the first-th event of the
// turn on: those the hub already has (a batch sent again) are skipped, and the turn
// keeps at most MaxTurnEvents. Events for a turn that is no longer in flight are
// dropped: it ended.
func (r *RuntimeAPI) TurnEvents(ctx context.Context, rc RuntimeCaller, turnID string, first int, events []TurnEvent) error {
	if first < 0 || len(events) > MaxEventsBatch {
		return Errorf(CodeInvalidRequest, "first must be 0 or more, and a batch at most %d events", MaxEventsBatch)
	}
	return r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
		if m, err := inFlight(ctx, q, ws.ID, turnID); m == nil || err != nil {
			return err
		}
		mask, err := r.maskIn(ctx, q, ws)
		if err != nil {
			return err
		}
		// Masked before clean cuts the texts: a value cut in two would not be found.
		return r.storeRunEvents(ctx, q, ws, turnID, first, MaxTurnEvents, events, func(e *TurnEvent) bool {
			e.Tool, e.Summary, e.Delta = mask.Mask(e.Tool), mask.Mask(e.Summary), mask.Mask(e.Delta)
			return e.clean()
		})
	})
}

// storeRunEvents stores a batch of a run's events (a turn's, a script's) from the
// first-th of the run on: those the hub has (a batch sent again) are skipped, a run
// keeps at most limit, and keep readies each event or says it is not kept.
func (r *RuntimeAPI) storeRunEvents(ctx context.Context, q Queries, ws *Workspace, runID string, first, limit int,
	events []TurnEvent, keep func(*TurnEvent) bool) error {
	have, err := q.CountTurnEvents(ctx, ws.ID, runID)
	if err != nil {
		return err
	}
	now := r.rt.clock.Now()
	var kept []*TurnEvent
	for i := range events {
		e := events[i]
		if first+i < have || have+len(kept) >= limit || !keep(&e) {
			continue
		}
		e.WorkspaceID, e.TurnID, e.CreatedAt = ws.ID, runID, now
		kept = append(kept, &e)
	}
	return r.rt.in(ctx, q).runningTurnEvents(ws.ID, runID, false, kept...)
}

// WaitStop waits up to wait for someone to ask to stop the running turn turnID, and
// reports whether they did (the runtime then stops its agent).
func (r *RuntimeAPI) WaitStop(ctx context.Context, rc RuntimeCaller, turnID string, wait time.Duration) (bool, error) {
	if !ValidID(turnID, PrefixTurn) {
		return false, Errorf(CodeTurnNotFound, "no turn %q in this workspace", turnID)
	}
	messageID := PrefixMessage + strings.TrimPrefix(turnID, PrefixTurn)
	w := watchKey(r.rt.wake, StopChannel, turnID, remoteSafetyPoll)
	defer w.Close()
	return w.until(ctx, time.Now().Add(wait), func() (bool, time.Duration, error) {
		stopped := false
		err := r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
			m, err := q.GetMessage(ctx, ws.ID, messageID)
			if err != nil {
				return notFound(err, CodeTurnNotFound, "no turn "+turnID+" in this workspace")
			}
			stopped = m.StopRequested
			return nil
		})
		return stopped, 0, err
	})
}
