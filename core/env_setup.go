package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Getting a local workspace ready: after its checkout, the project's environment
// (environment.go) is resolved at the workspace's base, its caches restored, its setup
// script run in the workspace's sandbox like a turn (same limits and network), its
// output recorded as events people can watch, its caches saved, and only then is the
// workspace ready. A script that fails or runs out of time fails the workspace
// setup_failed:… with the last lines of its output.

// Setup event types: what the setup or update script printed, and how it ended. Their
// TurnID is the script run's own id (setup_…, update_…).
const (
	EventSetupOutput   TurnEventType = "setup_output"
	EventSetupFinished TurnEventType = "setup_finished"
)

// Scripts an environment runs.
const (
	ScriptSetup  = "setup"
	ScriptUpdate = "update"
)

// ScriptRequest is one run of an environment's script in a workspace's sandbox.
type ScriptRequest struct {
	WorkspaceID string
	// RunID names the run (its events' TurnID).
	RunID string
	// Name is ScriptSetup or ScriptUpdate.
	Name   string
	Script string
	// Dir, Home, Network and Size are as a turn's (TurnRequest).
	Dir, Home, Network string
	Size               ProviderSize
	// Env are NAME=value variables on top of the sandbox's own: the environment's env,
	// then the secrets the script may have.
	Env []string
	// Output is told each line the script writes (standard output and error, merged),
	// without its line break; called from the runner's goroutines.
	Output func(line string)
}

// ScriptResult is how a script run ended.
type ScriptResult struct {
	// ExitCode is the script's exit status (-1 when it did not exit by itself).
	ExitCode int
	// Interrupted: ctx ended (its deadline: the setup timeout; or a stop).
	Interrupted bool
	// Limit names the workspace limit that ended it ("memory", "processes"), "" none.
	Limit string
	// Err says why it could not be started.
	Err error
}

// maxScriptLine bounds one line of a script's output, in characters: with its "…" when
// cut and its line break, it fits an event's delta.
const maxScriptLine = maxEventDelta - 2

// maxSetupTail bounds the output kept for a failed setup's statusDetail.
const (
	maxSetupTailLines = 20
	maxSetupTailBytes = 1500
)

// setupTail keeps the last lines of a script's output.
type setupTail struct{ lines []string }

func (t *setupTail) add(line string) {
	t.lines = append(t.lines, line)
	if len(t.lines) > maxSetupTailLines {
		t.lines = t.lines[1:]
	}
}

func (t *setupTail) String() string {
	s := strings.Join(t.lines, "\n")
	if len(s) > maxSetupTailBytes {
		s = "…" + strings.ToValidUTF8(s[len(s)-maxSetupTailBytes:], "")
	}
	return s
}

// environments runs projects' environments for the worker: a group of its own, so
// the worker's stays small.
type environments struct{ *Worker }

// setupEnvironment resolves the workspace's environment and runs it on its checkout:
// caches restored, setup, caches saved. It returns the statusDetail of the ready
// workspace ("" none: what of the environment did not apply here), or a *SetupError.
func (s environments) setupEnvironment(ctx context.Context, ws *Workspace, lease string, p *Project) (string, error) {
	if s.envFiles == nil {
		return "", nil
	}
	env, err := ResolveEnvironment(ctx, s.envFiles, p, ws.BaseRef)
	if err != nil {
		return "", err
	}
	if env.Source == "" {
		return "", nil
	}
	if err := s.keepEnvironment(ctx, ws, lease, env); err != nil {
		return "", err
	}
	var notes []string
	if env.Image != "" {
		notes = append(notes, fmt.Sprintf("the image %s that %s names is not applied: this provider runs workspaces on the hub's host", env.Image, env.Source))
	}
	if len(env.Ignored) > 0 {
		notes = append(notes, fmt.Sprintf("%s: ignored %s", env.Source, strings.Join(env.Ignored, ", ")))
	}
	if env.Setup == "" && len(env.Cache) == 0 {
		return strings.Join(notes, "; "), nil
	}
	runID := NewID(s.rand, "setup_")
	events := s.recordScriptEvents(ctx, ws.ID, runID)
	secrets, values, err := s.secretsFor(ctx, ws, p, secretsForSetup)
	if err != nil {
		events.close()
		return "", err
	}
	mask := NewMasker(values)
	say := func(line string) {
		events.add(TurnEvent{Type: EventSetupOutput, Tool: ScriptSetup, Delta: mask.Mask(line) + "\n"})
	}
	if err := s.restoreCaches(ctx, ws, p, env, say); err != nil {
		events.close()
		return "", err
	}
	res, tail := s.runScript(ctx, ws, p, env, ScriptSetup, env.Setup, runID, secrets, mask, events)
	if err := scriptFailure(ctx, env, ScriptSetup, res, tail); err != nil {
		if se, ok := err.(*SetupError); ok {
			events.finish(OutcomeError, se.Detail)
		} else {
			events.finish(OutcomeInterrupted, "")
		}
		events.close()
		return "", err
	}
	// Before any turn: an agent never writes what the next workspace restores.
	s.saveCaches(ctx, ws, p, env, say)
	if err := s.machines.KeepOutOfCommits(ctx, ws, env.cachePaths()); err != nil {
		events.close()
		return "", fmt.Errorf("keep the setup's files out of commits: %w", err)
	}
	events.finish(OutcomeCompleted, "")
	events.close()
	return strings.Join(notes, "; "), nil
}

// cachePaths are the paths of every cache entry that lie in the checkout.
func (e *Environment) cachePaths() []string {
	var out []string
	for _, c := range e.Cache {
		for _, p := range c.Paths {
			if !strings.HasPrefix(p, "~/") {
				out = append(out, p)
			}
		}
	}
	return out
}

// runScript runs one of the environment's scripts in the workspace's sandbox, under
// the environment's timeout, recording its output (masked) as events.
func (s environments) runScript(ctx context.Context, ws *Workspace, p *Project, env *Environment, name, script, runID string,
	secrets []string, mask *Masker, events *eventRecorder) (ScriptResult, *setupTail) {
	tail := &setupTail{}
	if s.runner == nil {
		return ScriptResult{ExitCode: -1, Err: errors.New("this hub runs no workspace on its own host")}, tail
	}
	// The script stops when its workspace moves on (deleted, archived): the worker's
	// heartbeat would see it too, but only at its next renewal.
	moved, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer s.watchMove(moved, ws, stop)()
	sctx, cancel := context.WithTimeout(moved, env.Timeout())
	defer cancel()
	var mu sync.Mutex
	req := ScriptRequest{WorkspaceID: ws.ID, RunID: runID, Name: name, Script: script, Dir: ws.CheckoutPath,
		Home: s.machines.Home(ws), Network: p.Network, Size: s.sizeOf(ctx, ws),
		Env: append(env.EnvList(), secrets...),
		Output: func(line string) {
			// Masked before it is cut: a value cut in two would show its head.
			if cut, ok := capRunes(mask.Mask(line), maxScriptLine); ok {
				line = cut + "…"
			} else {
				line = cut
			}
			mu.Lock()
			tail.add(line)
			mu.Unlock()
			events.add(TurnEvent{Type: EventSetupOutput, Tool: name, Delta: line + "\n"})
		}}
	res := s.runner.RunScript(sctx, req)
	if errors.Is(context.Cause(moved), errStateMoved) {
		res.Err = errStateMoved // not the script's failure: the workspace is being stopped
	}
	// Interrupted with ctx still live is the timeout (scriptFailure tells them apart).
	return res, tail
}

// watchMove cancels ctx when the workspace leaves the state it is in (a NOTIFY on
// WorkChannel with its id wakes the look, or the poll when LISTEN is down), and
// returns the function that ends the watch.
func (s environments) watchMove(ctx context.Context, ws *Workspace, cancel context.CancelCauseFunc) func() {
	w := watchKey(s.wake, WorkChannel, ws.ID, cmp.Or(s.config.Poll, DefaultStopPoll))
	ctx, end := context.WithCancel(ctx)
	done := make(chan struct{})
	from := ws.State
	go func() {
		defer close(done)
		defer w.Close()
		moved, _ := w.until(ctx, noDeadline, func() (bool, time.Duration, error) {
			cur, err := s.store.GetWorkspaceByID(ctx, ws.ID)
			return err == nil && cur.State != from, 0, nil // a failed read is tried at the next wake-up
		})
		if moved {
			cancel(errStateMoved)
		}
	}()
	return func() {
		end()
		<-done
	}
}

// scriptFailure is the *SetupError of a script run that did not succeed, nil when it
// did; ctx's error or errStateMoved when the workspace is being stopped, not failed.
func scriptFailure(ctx context.Context, env *Environment, name string, res ScriptResult, tail *setupTail) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(res.Err, errStateMoved) {
		return errStateMoved
	}
	last := tail.String()
	withTail := func(s string) string {
		if last == "" {
			return s
		}
		return s + "; its last output:\n" + last
	}
	switch {
	case res.Err != nil:
		return &SetupError{StatusCode: FailureStatus(FailureSetup, ReasonSetupScript),
			Detail: fmt.Sprintf("the %s script from %s could not be started: %v", name, env.Source, res.Err), Err: res.Err}
	case res.Interrupted:
		return &SetupError{StatusCode: FailureStatus(FailureSetup, ReasonSetupTimeout),
			Detail: withTail(fmt.Sprintf("the %s script from %s ran longer than its %s and was stopped", name, env.Source, env.Timeout()))}
	case res.Limit != "":
		return &SetupError{StatusCode: FailureStatus(FailureSetup, ReasonSetupScript),
			Detail: withTail(fmt.Sprintf("the %s script from %s was stopped by the workspace's limits. %s", name, env.Source, res.Limit))}
	case res.ExitCode != 0:
		return &SetupError{StatusCode: FailureStatus(FailureSetup, ReasonSetupScript),
			Detail: withTail(fmt.Sprintf("the %s script from %s exited with status %d", name, env.Source, res.ExitCode))}
	}
	return nil
}

// keepEnvironment records the resolved environment on the workspace (under its
// lease), so that its turns and its resumes use the environment it was set up with,
// without reading the repository again.
func (s environments) keepEnvironment(ctx context.Context, ws *Workspace, lease string, env *Environment) error {
	kept := keptEnvironment{Source: env.Source, Env: env.Env, Update: env.Update, Cache: env.Cache, SetupTimeout: env.SetupTimeout,
		Image: env.Image, Setup: env.Setup, Ignored: env.Ignored}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	return s.store.SetWorkspaceEnvironment(ctx, ws.ID, lease, b)
}

// keptEnvironment is what a workspace keeps of its environment.
type keptEnvironment struct {
	Source       string            `json:"source"`
	Env          map[string]string `json:"env,omitempty"`
	Update       string            `json:"update,omitempty"`
	Cache        []CacheSpec       `json:"cache,omitempty"`
	SetupTimeout EnvDuration       `json:"setupTimeout,omitempty"`
	// Setup, Image and Ignored are kept for a remote machine, whose environment is
	// resolved when it is first started and given to it later.
	Setup   string   `json:"setup,omitempty"`
	Image   string   `json:"image,omitempty"`
	Ignored []string `json:"ignored,omitempty"`
	// Notes say what of the environment did not apply: the ready workspace's
	// statusDetail (a remote runtime's; a local one's is set at once).
	Notes string `json:"notes,omitempty"`
	// CacheRun is the remote setup run whose Caches the hub planned, while it runs.
	CacheRun string        `json:"cacheRun,omitempty"`
	Caches   []remoteCache `json:"caches,omitempty"`
}

// workspaceEnvironment reads the environment a workspace was set up with (nil: none).
func (s environments) workspaceEnvironment(ctx context.Context, ws *Workspace) (*Environment, error) {
	b, err := s.store.WorkspaceEnvironment(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	return keptEnvironmentOf(b)
}

// keptEnvironmentOf reads the environment a workspace was set up with from its record
// (nil: none).
func keptEnvironmentOf(b []byte) (*Environment, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var k keptEnvironment
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("read the workspace's environment: %w", err)
	}
	return &Environment{Source: k.Source, Env: k.Env, Update: k.Update, Cache: k.Cache, SetupTimeout: k.SetupTimeout,
		Setup: k.Setup, Image: k.Image, Ignored: k.Ignored}, nil
}

// turnEnvironment is what a turn gets of its workspace's environment: its variables,
// the project's secrets marked for the agent, and the masker of those secrets'
// values for everything the turn says.
func (s environments) turnEnvironment(ctx context.Context, ws *Workspace, p *Project) ([]string, *Masker, error) {
	env, err := s.workspaceEnvironment(ctx, ws)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := openSecrets(ctx, s.kernel, s.store, p.ID)
	if err != nil {
		return nil, nil, err
	}
	list, mask := turnEnvironmentOf(env, secrets, ws, p)
	return list, mask, nil
}

// turnEnvironmentOf is turnEnvironment on what it reads: the workspace's environment
// (nil: none) and the project's secrets, opened.
func turnEnvironmentOf(env *Environment, secrets []openSecret, ws *Workspace, p *Project) ([]string, *Masker) {
	var out []string
	if env != nil {
		out = env.EnvList()
	}
	vars, values := secretsEnv(secrets, ws, p, secretsForAgent)
	return append(out, vars...), NewMasker(values)
}

// updateEnvironment runs the environment's update script when a workspace resumes. A
// failing update does not fail the workspace (its checkout and setup are still
// there): its events and the ready workspace's statusDetail say what happened.
func (s environments) updateEnvironment(ctx context.Context, ws *Workspace, p *Project) (string, error) {
	env, err := s.workspaceEnvironment(ctx, ws)
	if err != nil || env == nil || env.Update == "" {
		return "", err
	}
	runID := NewID(s.rand, "update_")
	events := s.recordScriptEvents(ctx, ws.ID, runID)
	defer events.close()
	secrets, values, err := s.secretsFor(ctx, ws, p, secretsForSetup)
	if err != nil {
		return "", err
	}
	res, tail := s.runScript(ctx, ws, p, env, ScriptUpdate, env.Update, runID, secrets, NewMasker(values), events)
	if err := scriptFailure(ctx, env, ScriptUpdate, res, tail); err != nil {
		se, ok := err.(*SetupError)
		if !ok {
			events.finish(OutcomeInterrupted, "")
			return "", err
		}
		events.finish(OutcomeError, se.Detail)
		return se.Detail, nil
	}
	events.finish(OutcomeCompleted, "")
	return "", nil
}

// recordScriptEvents records a script run's events: setup_output lines, and its end.
func (s environments) recordScriptEvents(ctx context.Context, workspaceID, runID string) *eventRecorder {
	r := s.recordEvents(ctx, workspaceID, runID)
	r.script = true
	return r
}

// finish adds a script run's setup_finished event.
func (r *eventRecorder) finish(outcome Outcome, reason string) {
	r.addOwn(TurnEvent{Type: EventSetupFinished, Outcome: outcome, Reason: reason})
}
