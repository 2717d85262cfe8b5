package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Texts of turns the hub ends itself.
const (
	// replyTurnLost ends a turn found still delivered by a new claim, with no result
	// kept in this process: the worker that ran it died, lost its lease, or could not
	// reach the database to record it.
	replyTurnLost = "The turn was interrupted: the agent's reply could not be recorded " +
		"(the hub stopped, or lost its database, while the agent was working)."
)

// runNextTurn runs the oldest open user message of a ready, leased workspace as one
// agent turn: claim (pending -> delivered), run the agent outside any transaction,
// commit the checkout, record the turn (assistant message, settle, lastTurn) in one
// transaction. A message found already delivered was claimed by a worker that died or
// could not record it: endStaleTurn ends it and the queue moves on.
//
// A finished turn is not lost to a store outage: recording it is retried while the
// claim lasts, and when that is not enough its result is kept in memory for the next
// claim of the workspace (endStaleTurn). ctx cancelled with the cause ErrLeaseLost
// means another claim has the workspace: nothing is written.
func (s *Worker) runNextTurn(ctx context.Context, ws *Workspace, lease string) (bool, error) {
	now := s.clock.Now()
	next, err := s.store.TakeNextTurn(ctx, ws.ID, lease, now)
	if err != nil {
		return false, fmt.Errorf("take next turn of %s: %w", ws.ID, err)
	}
	if next.Workspace.State != StateReady {
		return false, errStateMoved
	}
	*ws = *next.Workspace
	msg := next.Message
	if msg == nil {
		return false, nil
	}
	if msg.Status == MessageDelivered {
		return true, s.endStaleTurn(ctx, ws, lease, msg)
	}
	msg.Status, msg.DeliveredAt = MessageDelivered, &now

	started := s.clock.Now()
	result, set := s.runAgent(ctx, ws, next)
	took := s.clock.Now().Sub(started)
	if errors.Is(context.Cause(ctx), ErrLeaseLost) {
		// The claim that takes over ends the turn; anything written here would race it.
		s.log().Warn("turn not recorded: the worker lost its lease; the next claim ends it",
			"workspace", ws.ID, "turn", msg.TurnID)
		return false, fmt.Errorf("record turn %s: %w", msg.TurnID, ErrLeaseLost)
	}
	result.Commit = s.commitTurn(ctx, ws, msg, set)
	err = s.retryStore(ctx, func(ctx context.Context) error { return s.recordTurn(ctx, ws, lease, msg, result) })
	if err != nil {
		s.keepUnrecorded(ws, msg, result, err)
		return false, fmt.Errorf("record turn %s: %w", msg.TurnID, err)
	}
	s.reportTurn(TurnReport{WorkspaceID: ws.ID, TurnID: msg.TurnID, Agent: ws.Agent, Outcome: cmp.Or(result.Outcome, OutcomeError),
		FailureCode: result.FailureCode, Took: took, Commit: result.Commit})
	// More only when another message waits, as the record read it: the worker lets go
	// of a workspace with none at once, without asking for the next. One sent after
	// the record is claimed by its own wake-up.
	return ws.OpenMessages, nil
}

// endStaleTurn ends a turn a new claim found still delivered. A result this process
// kept because the store was unreachable when the turn finished is recorded as it
// was; otherwise the worker that ran the turn is gone, and it ends interrupted.
func (s *Worker) endStaleTurn(ctx context.Context, ws *Workspace, lease string, msg *StoredMessage) error {
	r, kept := s.unrecorded.take(msg.ID)
	if kept {
		r.Commit = s.commitTurn(ctx, ws, msg, turnSettings{}) // the outage may have kept the project from being read then
	} else {
		r = TurnResult{Outcome: OutcomeInterrupted, Reply: replyTurnLost}
	}
	err := s.retryStore(ctx, func(ctx context.Context) error { return s.recordTurn(ctx, ws, lease, msg, r) })
	if err != nil && kept {
		s.keepUnrecorded(ws, msg, r, err)
	}
	return err
}

// commitTurn commits the turn's changes on the workspace branch, with the project and
// the co-author the turn read at its start (set; what it lacks is read now). The
// project is the turn's: a setting changed while its agent ran (push, credentials)
// applies from the next turn. Reading is retried like the record, so an outage does
// not leave this turn's changes to the next turn's commit; git itself runs once.
func (s *Worker) commitTurn(ctx context.Context, ws *Workspace, msg *StoredMessage, set turnSettings) (tc TurnCommit) {
	p, coAuthor := set.project, set.coAuthor
	err := s.retryStore(ctx, func(ctx context.Context) error {
		var err error
		if p == nil {
			if p, err = s.store.GetProject(ctx, ws.AccountID, ws.ProjectID); err != nil {
				return err
			}
		}
		if !set.coAuthorRead {
			coAuthor, err = coAuthorOf(ctx, s.store, msg)
			set.coAuthorRead = err == nil
		}
		return err
	})
	if err == nil {
		err = s.forHub(ctx, p, s.mirror)
	}
	if err == nil {
		// The commit must survive the cancellation that interrupted the turn (shutdown).
		commitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		prompt, _ := s.open(msg.SealedText, SealedMessageText.binding(ws.ID, msg.ID))
		tc, err = s.machines.CommitTurn(commitCtx, ws, p, TurnCommitMessage(string(prompt), msg.TurnID, ws.ID, coAuthor))
		if err == nil && tc.Pushed {
			pull, note := s.pulls.afterPush(ctx, ws, p)
			tc.Pull, tc.PullNote, tc.OfferPull = pull, note, s.pulls.offered(ws, p)
		}
	}
	if err != nil {
		s.log().Warn("commit turn", "workspace", ws.ID, "turn", msg.TurnID, "err", err)
		tc.Failed = !tc.Committed // committed, then a push cut short: the commit stands
	}
	if tc.PushRefused {
		s.log().Warn("push refused", "workspace", ws.ID, "turn", msg.TurnID, "branch", ws.Branch, "reason", tc.PushError)
	}
	return tc
}

// pushNote is what a reply says of its push: that it reached the repository, or why
// not, so a refused push (a pre-receive hook) is not a silent "completed".
func pushNote(c TurnCommit, branch string) string {
	return commitFailedNote(c) + leftOutNote(c.LeftOut) + pushOutcome(c, branch)
}

// commitFailedNote says that the turn's work was not committed, so a failed commit is
// not a silent "completed".
func commitFailedNote(c TurnCommit) string {
	if !c.Failed {
		return ""
	}
	return "\n\n---\nThe hub could not commit this turn's work: it stays in the workspace, and the next turn's commit takes it."
}

// leftOutNote says what the hub did not commit, so a missing directory is explained.
func leftOutNote(left string) string {
	if left == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n---\nNot committed:")
	for l := range strings.Lines(left) {
		l = strings.TrimSuffix(l, "\n")
		b.WriteString("\n- `" + strings.ReplaceAll(l, "`", "'") + "`")
	}
	return b.String()
}

func pushOutcome(c TurnCommit, branch string) string {
	switch {
	case c.Pushed && c.PullNote != "":
		return "\n\n---\nPushed to `" + branch + "` (" + shortSHA(c.SHA) + ").\n" + c.PullNote
	case c.Pushed:
		return "\n\n---\nPushed to `" + branch + "` (" + shortSHA(c.SHA) + ")."
	case c.PushRefused:
		return "\n\n---\nPush to `" + branch + "` refused: " + c.PushError
	}
	return ""
}

func shortSHA(sha string) string { return sha[:min(len(sha), 12)] }

// runAgent materialises the attachments and runs the agent under the turn time limit.
// It returns what the turn read to run with (its zero value when it read nothing).
func (s *Worker) runAgent(ctx context.Context, ws *Workspace, next *NextTurn) (TurnResult, turnSettings) {
	msg := next.Message
	if msg.StopRequested {
		return TurnResult{Outcome: OutcomeInterrupted, Reply: replyStopped}, turnSettings{}
	}
	prompt, err := s.open(msg.SealedText, SealedMessageText.binding(ws.ID, msg.ID))
	if err != nil {
		return TurnResult{Outcome: OutcomeError, FailureCode: FailureAgentError, FailureMessage: "the message could not be read by the hub"}, turnSettings{}
	}
	var files []string
	if len(msg.AssetIDs) > 0 {
		assets, err := s.store.AssetsByID(ctx, ws.ID, msg.AssetIDs)
		if err != nil {
			return TurnResult{Outcome: OutcomeError, FailureCode: FailureAgentError, FailureMessage: "the attachments could not be read by the hub"}, turnSettings{}
		}
		for _, a := range assets {
			data, err := readAttachment(ctx, s.kernel, s.blobs, a)
			if err == nil {
				var rel string
				if rel, err = s.machines.WriteFile(ctx, ws, a.ID+"-"+a.OriginalName, data); err == nil {
					files = append(files, rel)
				}
			}
			if err != nil {
				return TurnResult{Outcome: OutcomeError, FailureCode: FailureAgentError, FailureMessage: "attachment " + a.OriginalName + " could not be placed in the workspace"}, turnSettings{}
			}
		}
	}
	turnCtx := ctx
	if s.config.TurnTimeout > 0 {
		var cancel context.CancelFunc
		turnCtx, cancel = context.WithTimeout(ctx, s.config.TurnTimeout)
		defer cancel()
	}
	turnCtx, stop := context.WithCancelCause(turnCtx)
	defer stop(nil)
	// The watch's first look (a stop asked since the turn was taken) is made while the
	// turn's settings are opened (and a member's co-author read).
	looked, endWatch := s.watchStop(ctx, ws, msg.TurnID, msg.ID, stop)
	defer endWatch()
	set, err := readTurnSettings(ctx, s.kernel, s.store, ws, next)
	// Fail closed: a turn whose project cannot be read gets no network rather than more
	// than the operator may have allowed.
	network := NetworkNone
	if set.project != nil {
		network = set.project.Network
	}
	if err != nil {
		// Fail closed: a turn never runs without the secrets masked that it may print.
		return TurnResult{Outcome: OutcomeError, FailureCode: FailureAgentError,
			FailureMessage: "the workspace's environment could not be read; the turn did not start"}, set
	}
	<-looked
	if errors.Is(context.Cause(turnCtx), ErrTurnStopped) {
		return TurnResult{Outcome: OutcomeInterrupted, Reply: replyStopped}, set
	}
	if next.ChatThreads {
		defer s.startChatStatuses(ctx, ws.ID, msg.TurnID)()
	}
	events := s.recordEvents(ctx, ws.ID, msg.TurnID)
	events.mask = set.mask
	defer events.close()
	req := TurnRequest{
		WorkspaceID: ws.ID, TurnID: msg.TurnID, Agent: ws.Agent, Model: ws.Model, RuntimeMode: ws.RuntimeMode,
		Branch: ws.Branch, Dir: ws.CheckoutPath, Home: s.machines.Home(ws), Network: network, Size: s.sizeOf(ctx, ws),
		Prompt: prompt, Env: set.env, Attachments: files, SessionID: ws.AgentSession, Events: events.add,
	}
	if ws.RuntimeMode == ModeApprovalRequired {
		req.Approve = func(ctx context.Context, ask ApprovalAsk) ApprovalAnswer {
			return s.approvals().ask(ctx, ws, msg.TurnID, events, ask)
		}
	}
	if s.runner == nil {
		// A workspace made on this host before local was left out of the hub's
		// providers: nothing here runs its turns.
		return TurnResult{Outcome: OutcomeError, FailureCode: FailureAgentNotInstalled,
			FailureMessage: "this hub runs no workspace on its own host (local is not among its providers): start a new workspace on another provider"}, set
	}
	res := s.runner.RunTurn(turnCtx, req)
	res.Reply, res.FailureMessage = set.mask.Mask(res.Reply), set.mask.Mask(res.FailureMessage)
	return res, set
}

// recordTurn writes a finished turn in one transaction: the assistant message (reply
// capped), the user message settled, the workspace's lastTurn and agent session, and
// the turn's event with its webhook deliveries and chat replies (outbox).
func (s *Worker) recordTurn(ctx context.Context, ws *Workspace, lease string, user *StoredMessage, r TurnResult) error {
	return s.store.InTx(ctx, func(q Queries) error {
		cur, err := q.LockLeasedWorkspace(ctx, ws.ID, lease)
		if err != nil {
			return fmt.Errorf("lock leased %s: %w", ws.ID, err)
		}
		if err := s.recordTurnIn(ctx, q, cur, user, r); err != nil {
			return err
		}
		*ws = *cur
		return nil
	})
}

// recordTurnIn is recordTurn's transaction on a workspace row the caller has locked
// (by its lease here, by its runtime's token for a remote runtime); cur is updated.
// A user message no longer delivered records nothing: the turn was recorded once.
func (s *Worker) recordTurnIn(ctx context.Context, q Queries, cur *Workspace, user *StoredMessage, r TurnResult) error {
	reply, truncated := replyOf(r, cur.Branch)
	if r.Outcome == "" {
		r.Outcome = OutcomeError
	}
	ws := cur
	now := s.clock.Now()
	settled, err := q.SettleMessage(ctx, user.ID)
	if err != nil {
		return err
	}
	if !settled {
		// The message is no longer delivered: an earlier attempt committed though its
		// answer was lost with the connection (or a sweep failed the message). The
		// turn is recorded once.
		return nil
	}
	seq, err := q.NextSeq(ctx, ws.ID, now)
	if err != nil {
		return err
	}
	m := &Message{
		ID: NewID(s.rand, PrefixMessage), WorkspaceID: ws.ID, Seq: seq, Role: RoleAssistant, Text: reply,
		Status: MessageSettled, TurnID: user.TurnID, Outcome: r.Outcome, CreatedAt: now,
	}
	sealed, err := s.seal([]byte(reply), SealedMessageText.binding(ws.ID, m.ID))
	if err != nil {
		return err
	}
	var failure *TurnFailure
	var sealedFailure []byte
	if r.Outcome == OutcomeError {
		code := r.FailureCode
		if code != FailureAgentNotInstalled {
			code = FailureAgentError
		}
		text, _ := capTail(r.FailureMessage, MaxFailureMessageChars)
		failure = &TurnFailure{TurnID: user.TurnID, Agent: cur.Agent, Code: code, Message: text}
		if sealedFailure, err = s.seal([]byte(text), SealedMessageFailure.binding(ws.ID, m.ID)); err != nil {
			return err
		}
	}
	if err := q.InsertAssistantMessage(ctx, m, sealed, failure, sealedFailure); err != nil {
		return err
	}
	if err := s.in(ctx, q).turnRecorded(cur, m, truncated, r.Commit); err != nil {
		return err
	}
	cur.LastTurnID, cur.LastTurnOutcome, cur.LastTurnCompletedAt = user.TurnID, r.Outcome, &now
	cur.LastTurnFailure = ""
	if failure != nil {
		cur.LastTurnFailure = failure.Code
	}
	cur.LastActivityAt, cur.UpdatedAt = now, now
	if r.SessionID != "" && ValidAgentSession(r.SessionID) {
		cur.AgentSession = r.SessionID
	}
	if r.Commit.Committed {
		cur.HeadCommit = r.Commit.SHA
	}
	if r.Commit.Pull != nil {
		requested := cur.Pull.Requested
		cur.Pull = *r.Commit.Pull
		cur.Pull.Requested = requested
	}
	switch {
	case r.Commit.Pushed:
		cur.LastPush = PushPushed
	case r.Commit.PushRefused:
		cur.LastPush = PushRefused
	}
	return q.RecordLastTurn(ctx, cur)
}

// replyOf is the assistant message's text: the agent's reply, capped, with the push
// note; truncated says whether the reply was cut.
func replyOf(r TurnResult, branch string) (string, bool) {
	note := pushNote(r.Commit, branch)
	reply, truncated := capRunes(r.Reply, MaxReplyChars-chars(note))
	return reply + note, truncated
}

// capRunes keeps the first n characters; cut reports whether anything was dropped.
func capRunes(s string, n int) (string, bool) {
	if chars(s) <= n {
		return s, false
	}
	return string([]rune(s)[:n]), true
}

// capTail keeps the last n characters (an error's end says most).
func capTail(s string, n int) (string, bool) {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	return string(r[len(r)-n:]), true
}
