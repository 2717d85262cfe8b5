package core

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"
)

// Stopping a turn: POST /v1/api/workspaces/{id}/turns/{turnId}/stop. The
// request is kept on the turn's user message and announced (NOTIFY on StopChannel
// with the turn id); the runtime running the turn, in whichever replica or machine,
// cancels the agent, and the turn ends interrupted with what the agent had said. The
// workspace's queued messages go on. A turn asked to stop before it started ends
// interrupted as soon as it is taken, without running the agent.

// StopChannel is the NOTIFY channel of stop requests; the payload is the turn id.
const StopChannel = "wshub_stop"

// ErrTurnStopped is the cause a turn's context is cancelled with when it is stopped.
var ErrTurnStopped = errors.New("turn stopped")

// replyStopped ends a turn stopped before its agent started.
const replyStopped = "The turn was stopped before the agent started."

// StopTurn asks for a turn to be stopped. It answers whether the turn was running
// (false: it had not started yet and will end as soon as it is taken).
func (s *Workspaces) StopTurn(ctx context.Context, acct *Account, workspaceID, turnID string) (running bool, err error) {
	if !ValidID(turnID, PrefixTurn) {
		return false, Errorf(CodeTurnNotFound, "no turn %q in this workspace", turnID)
	}
	messageID := PrefixMessage + strings.TrimPrefix(turnID, PrefixTurn)
	err = inTx(ctx, s.store, func(q Queries) error {
		ws, err := lockAccountWorkspace(ctx, q, acct, workspaceID)
		if err != nil {
			return contended(notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account"))
		}
		m, err := q.GetMessage(ctx, ws.ID, messageID)
		if err != nil {
			return notFound(err, CodeTurnNotFound, "no turn "+turnID+" in this workspace")
		}
		if m.Role != RoleUser {
			return Errorf(CodeTurnNotFound, "no turn %s in this workspace", turnID)
		}
		switch m.Status {
		case MessagePending:
		case MessageDelivered:
			running = true
		default:
			return Errorf(CodeTurnNotRunning, "turn %s already ended (its message is %s)", turnID, m.Status)
		}
		if err := q.RequestStop(ctx, m.ID, s.clock.Now()); err != nil {
			return err
		}
		return wake(ctx, q, StopChannel, turnID)
	})
	return running, err
}

// watchStop cancels a running turn's context (cause ErrTurnStopped) when someone asks
// to stop it; end ends the watch. A wake-up is checked against the store: after a
// reconnect every waiter is woken. The watch's first look at the store is made at once,
// once the watch is on, so a stop asked before is seen too: looked closes after it (the
// context cancelled first when it found one), so the turn can wait for it before
// starting its agent while reading what else it needs meanwhile.
func (s *Worker) watchStop(ctx context.Context, ws *Workspace, turnID, messageID string, cancel context.CancelCauseFunc) (looked <-chan struct{}, end func()) {
	// The poll matters when LISTEN is down: the workers poll for work then, and a
	// stop must not wait for the turn's end.
	w := watchKey(s.wake, StopChannel, turnID, cmp.Or(s.config.Poll, DefaultStopPoll))
	ctx, endWatch := context.WithCancel(ctx)
	first, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer w.Close()
		_, _ = w.until(ctx, noDeadline, func() (bool, time.Duration, error) {
			m, err := s.store.GetMessage(ctx, ws.ID, messageID)
			stopped := err == nil && m.StopRequested // a failed read is tried at the next wake-up
			if stopped {
				cancel(ErrTurnStopped)
			}
			select {
			case <-first:
			default:
				close(first)
			}
			return stopped, 0, nil
		})
	}()
	return first, func() {
		endWatch()
		<-done
	}
}
