package coretest

import (
	"context"
	"slices"
	"sync"

	"github.com/wshub/wshub/core"
)

// Runner is core's AgentRunner in a test: each turn plays the script the test gave
// for its prompt (Play), step by step; a prompt with no script is answered with
// "echo: " and the prompt. Environment scripts succeed at once.
type Runner struct {
	mu      sync.Mutex
	scripts map[string][]Step
	played  []*Turn
}

var _ core.AgentRunner = (*Runner)(nil)

// Turn is one turn the runner played: the request core made, and the answers its
// approval asks got, in order.
type Turn struct {
	Req     core.TurnRequest
	Answers []core.ApprovalAnswer
	mu      *sync.Mutex // the runner's: Played reads while a turn plays
}

// A Step is one thing a scripted agent does in a turn. It returns the turn's result
// when the turn ends with it, nil to go on to the next step.
type Step func(ctx context.Context, turn *Turn) *core.TurnResult

// Play gives the script of every turn whose prompt is prompt. A script that ends
// without a result completes the turn with no reply.
func (r *Runner) Play(prompt string, steps ...Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scripts == nil {
		r.scripts = map[string][]Step{}
	}
	r.scripts[prompt] = steps
}

// Played are the turns the runner has played (finished or not), in the order they
// started.
func (r *Runner) Played() []Turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Turn, len(r.played))
	for i, t := range r.played {
		out[i] = Turn{Req: t.Req, Answers: slices.Clone(t.Answers)}
	}
	return out
}

// RunTurn plays the prompt's script.
func (r *Runner) RunTurn(ctx context.Context, req core.TurnRequest) core.TurnResult {
	r.mu.Lock()
	steps, ok := r.scripts[req.Prompt]
	turn := &Turn{Req: req, mu: &r.mu}
	r.played = append(r.played, turn)
	r.mu.Unlock()
	if !ok {
		steps = []Step{Reply("echo: " + req.Prompt)}
	}
	for _, step := range steps {
		if res := step(ctx, turn); res != nil {
			return *res
		}
	}
	return core.TurnResult{Outcome: core.OutcomeCompleted}
}

// RunScript succeeds: the harness's workspaces have no environment to set up.
func (r *Runner) RunScript(context.Context, core.ScriptRequest) core.ScriptResult {
	return core.ScriptResult{}
}

// Say reports a text event.
func Say(text string) Step {
	return Event(core.TurnEvent{Type: core.EventText, Delta: text})
}

// Event reports a turn event (tool_started, text, ...).
func Event(e core.TurnEvent) Step {
	return func(_ context.Context, turn *Turn) *core.TurnResult {
		turn.Req.Events(e)
		return nil
	}
}

// Ask asks for an approval and waits for its answer (kept in Turn.Answers). A turn
// without an approver (not in the approval-required mode) is denied at once, as
// core's agents are; a turn stopped while it waits ends interrupted, as a killed
// agent does.
func Ask(ask core.ApprovalAsk) Step {
	return func(ctx context.Context, turn *Turn) *core.TurnResult {
		ans := core.ApprovalAnswer{Reason: "Denied: nobody asked"}
		if turn.Req.Approve != nil {
			ans = turn.Req.Approve(ctx, ask)
		}
		turn.mu.Lock()
		turn.Answers = append(turn.Answers, ans)
		turn.mu.Unlock()
		if ctx.Err() != nil {
			return &core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: "stopped"}
		}
		return nil
	}
}

// Reply ends the turn completed with text as its reply.
func Reply(text string) Step {
	return func(context.Context, *Turn) *core.TurnResult {
		return &core.TurnResult{Outcome: core.OutcomeCompleted, Reply: text}
	}
}

// Fail ends the turn in error (code agent_error or agent_not_installed).
func Fail(code, message string) Step {
	return func(context.Context, *Turn) *core.TurnResult {
		return &core.TurnResult{Outcome: core.OutcomeError, FailureCode: code, FailureMessage: message}
	}
}

// Hold keeps the turn running until release is closed (the script goes on) or the
// turn is stopped (it ends interrupted). started, when not nil, is closed as the hold
// begins: the turn is running. A hold plays once: played again (the turn run twice),
// it ends the turn in error at once.
func Hold(started chan<- struct{}, release <-chan struct{}) Step {
	var once sync.Once
	return func(ctx context.Context, _ *Turn) *core.TurnResult {
		first := false
		once.Do(func() { first = true })
		if !first {
			return &core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "held twice"}
		}
		if started != nil {
			close(started)
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return &core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: "stopped"}
		}
	}
}
