package wsruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// runTurn runs one turn as the hub's local runtime does (turn.go in core): place the
// attachments, run the agent under the turn time limit, commit the checkout, then
// upload the commits and report the result, both retried until the hub takes them.
// A turn cut short because the runtime must stop is not reported: the hub ends it.
// One cut short because the hub is lost keeps its work in a commit on the machine.
func (r *Runtime) runTurn(ctx context.Context, turn *runtimewire.Turn) error {
	log := r.log.With("turn", turn.TurnID)
	started := time.Now()
	rep := runtimewire.Report{SessionID: turn.SessionID}
	files, err := r.files(ctx, turn)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		log.Warn("attachments not placed", "err", err)
		rep.Outcome, rep.FailureCode = string(core.OutcomeError), core.FailureAgentError
		rep.FailureMessage = "the message's attachments could not be placed in the workspace"
	} else {
		events := r.relayEvents(ctx, turn.TurnID)
		agentCtx, stopAgent := context.WithCancel(ctx)
		watched := r.watchStop(agentCtx, turn.TurnID, stopAgent)
		res := r.runAgent(agentCtx, turn, files, events)
		stopAgent()
		<-watched
		events.close()
		rep.Outcome, rep.Reply, rep.FailureCode, rep.FailureMessage = string(res.Outcome), res.Reply, res.FailureCode, res.FailureMessage
		// The agent names its session; one the hub would refuse is not sent, so a
		// hostile agent cannot make the turn's report fail.
		if res.SessionID != "" && core.ValidAgentSession(res.SessionID) {
			rep.SessionID = res.SessionID
		}
	}
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), ErrHubLost) {
			r.keepWork(ctx, turn)
		}
		return context.Cause(ctx)
	}
	// The commit must survive a cancellation between here and the report.
	commitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	commit, left, err := r.commit(commitCtx, turn)
	if err != nil {
		log.Warn("commit turn", "err", err)
		rep.CommitFailed = true
	}
	rep.Commit = commit
	lines := make([]string, len(left))
	for i, l := range left {
		lines[i] = l.String()
	}
	rep.LeftOut = core.FitLeftOut(lines)
	var rec runtimewire.Recorded
	if _, err := r.hub.call(ctx, request{method: "POST", path: "/turns/" + turn.TurnID, json: rep}, &rec); err != nil {
		return err
	}
	log.Info("turn reported", "outcome", rep.Outcome, "recorded", rec.Recorded, "took", time.Since(started).Round(time.Millisecond))
	return nil
}

// keepWork commits what the agent of a turn cut short by a lost hub left in the
// checkout, on the machine's disk only: nothing can be uploaded or reported now. A
// runtime started later on this disk sends the commit with its first turn's (the
// upload is everything since the hub's head), and its hello ends this turn
// interrupted.
func (r *Runtime) keepWork(ctx context.Context, turn *runtimewire.Turn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	committed, _, err := r.repo().Commit(ctx, r.hello.Branch, core.TurnCommitMessage(turn.Prompt, turn.TurnID, r.hello.WorkspaceID, turn.CoAuthor))
	switch {
	case err != nil:
		r.log.Warn("the turn's work could not be committed on the machine", "turn", turn.TurnID, "err", err)
	case committed:
		r.log.Info("the turn's work is committed on the machine, for the next runtime to upload", "turn", turn.TurnID)
	}
}

// runAgent runs the agent in the sandbox, bounded by the hub's turn time limit.
func (r *Runtime) runAgent(ctx context.Context, turn *runtimewire.Turn, files []string, events *eventRelay) core.TurnResult {
	if r.hello.TurnTimeoutSeconds > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(r.hello.TurnTimeoutSeconds)*time.Second)
		defer cancel()
	}
	req := core.TurnRequest{
		WorkspaceID: r.hello.WorkspaceID, TurnID: turn.TurnID, Agent: r.hello.Agent, Model: r.hello.Model,
		RuntimeMode: r.hello.RuntimeMode, Branch: r.hello.Branch, Dir: r.checkoutDir(), Home: filepath.Join(r.cfg.Dir, "home"),
		Network: r.hello.Network, Size: core.ProviderSize{VCPUCount: r.hello.VCPUCount, MemoryMiB: r.hello.MemoryMiB},
		Prompt: turn.Prompt, Env: turn.Env, Attachments: files, SessionID: turn.SessionID, Events: events.add,
	}
	if r.hello.RuntimeMode == core.ModeApprovalRequired {
		req.Approve = func(ctx context.Context, ask core.ApprovalAsk) core.ApprovalAnswer {
			return r.approve(ctx, turn.TurnID, events, ask)
		}
	}
	return r.runner.RunTurn(ctx, req)
}

// approve asks the hub for a decision on what the agent wants to do, and asks again
// while it is pending (long polls): the hub's approval timeout, not this runtime,
// ends the wait.
func (r *Runtime) approve(ctx context.Context, turnID string, events *eventRelay, ask core.ApprovalAsk) core.ApprovalAnswer {
	events.sync(ctx) // the agent's earlier steps come first in the stream
	for ctx.Err() == nil {
		var a runtimewire.ApprovalAnswer
		_, err := r.hub.call(ctx, request{method: "POST", path: "/turns/" + turnID + "/approvals", json: runtimewire.Approval{
			Key: ask.Key, Tool: ask.Tool, Summary: ask.Summary, Input: ask.Input, WaitSeconds: runtimewire.MaxWaitSeconds}}, &a)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			r.log.Warn("approval not asked", "turn", turnID, "err", err)
			return core.ApprovalAnswer{Reason: "Denied: the hub could not be asked."}
		}
		if a.Status != string(core.ApprovalPending) {
			return core.ApprovalAnswer{ApprovalID: a.ApprovalID, Allow: a.Allow, Reason: a.Reason, Input: a.Input,
				InputSHA256: a.InputSHA256}
		}
	}
	return core.ApprovalAnswer{Reason: "Denied: the turn ended while waiting."}
}

// commit commits the turn's changes and uploads the new commits to the hub; nil when
// nothing changed.
func (r *Runtime) commit(ctx context.Context, turn *runtimewire.Turn) (*runtimewire.Commit, []gitrepo.LeftOut, error) {
	co := r.repo()
	committed, left, err := co.Commit(ctx, r.hello.Branch, core.TurnCommitMessage(turn.Prompt, turn.TurnID, r.hello.WorkspaceID, turn.CoAuthor))
	if err != nil {
		return nil, left, err
	}
	c, err := r.upload(ctx, co, committed)
	return c, left, err
}

// upload sends the hub every commit since its head and describes the turn's commit.
func (r *Runtime) upload(ctx context.Context, co *gitrepo.Checkout, committed bool) (*runtimewire.Commit, error) {
	// Commits an earlier turn made but could not upload go now too: the bundle is
	// everything since the hub's head.
	bundle := filepath.Join(r.cfg.Dir, "commits.bundle")
	defer os.Remove(bundle)
	made, err := co.BundleSince(ctx, r.hello.Branch, r.hubHead, bundle)
	if err != nil || !made {
		return nil, err
	}
	f, err := os.Open(bundle)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var up runtimewire.Commits
	if _, err := r.hub.call(ctx, request{method: "POST", path: "/commits", body: f, contentType: "application/x-git-bundle"}, &up); err != nil {
		return nil, err
	}
	if err := r.setHubHead(up.Head); err != nil {
		return nil, err
	}
	if !committed {
		return nil, nil
	}
	st, err := co.Head(ctx, r.hello.Branch)
	if err != nil {
		return &runtimewire.Commit{Head: up.Head}, nil
	}
	return &runtimewire.Commit{Head: st.SHA, Files: st.Files, Insertions: st.Insertions, Deletions: st.Deletions}, nil
}

// readAll reads a response body of at most limit bytes and closes it.
func readAll(resp *http.Response, limit int64) ([]byte, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("the hub sent more than %d bytes", limit)
	}
	return data, nil
}

// watchStop long-polls the hub for a request to stop the turn and stops the agent
// when one comes (the turn then ends interrupted and is reported as usual). The
// returned channel is closed when the watch has ended (ctx done).
func (r *Runtime) watchStop(ctx context.Context, turnID string, stop context.CancelFunc) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var st runtimewire.Stop
			_, err := r.hub.call(ctx, request{method: "POST", path: "/turns/" + turnID + "/stop-wait",
				json: runtimewire.Next{WaitSeconds: runtimewire.MaxWaitSeconds}}, &st)
			if err == nil && st.Stop {
				r.log.Info("turn stopped at the hub's request", "turn", turnID)
				stop()
				return
			}
			if err != nil && ctx.Err() == nil {
				return // a final answer (the turn or runtime is gone): nothing to watch
			}
		}
	}()
	return done
}
