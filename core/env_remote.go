package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// A remote runtime's environment: the runtime asks for the script to run once its
// checkout is in place (Environment), runs it in its own sandbox, sends its output
// (ScriptOutput) and how it ended (ScriptEnded), and only then says it is ready. The
// hub resolves the environment and holds the project's secrets: they reach the
// machine over this authenticated API only, never in its Pod spec, arguments or the
// environment it was started with.

// RuntimeScript is a script a remote runtime runs before its workspace is ready; the
// zero value (no RunID) means none.
type RuntimeScript struct {
	RunID string
	// Name is ScriptSetup or ScriptUpdate.
	Name   string
	Script string
	// Env are NAME=value: the environment's variables, then the project's secrets the
	// script may have.
	Env     []string
	Timeout time.Duration
	// KeepOut are the environment's cached paths in the checkout, left out of commits
	// with what the script wrote.
	KeepOut []string
	// Caches are the environment's caches: restored before the script, saved after it
	// (CacheArchive, CachePart, CacheSaved), each archive at most CacheMaxBytes.
	Caches        []RuntimeCache
	CacheMaxBytes int64
}

// RuntimeScriptEnd is how a remote runtime's script run ended.
type RuntimeScriptEnd struct {
	Outcome  Outcome
	ExitCode int
	// Limit says which of the workspace's limits ended it ("" none).
	Limit string
	// Tail are its last lines of output.
	Tail []string
	// Lines is how many lines of output the runtime sent (ScriptOutput): the end is
	// the event after them, so an end sent again is recorded once.
	Lines int
}

// Environment gives the runtime the script its workspace runs now: the setup of a
// workspace being set up, the update of one resuming, or none. An environment that
// cannot be used fails the workspace (setup_failed:environment_invalid), and the
// runtime is told to stop.
func (r *RuntimeAPI) Environment(ctx context.Context, rc RuntimeCaller) (*RuntimeScript, error) {
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return nil, err
	}
	var env *Environment
	var caches []RuntimeCache
	name, runID := ScriptSetup, ""
	switch {
	case ws.State == StateSetup && r.rt.envFiles != nil:
		// Resolved when the machine was first started (machineImage), else now.
		if env, err = (environments{r.rt}).workspaceEnvironment(ctx, ws); err != nil {
			return nil, err
		}
		if env == nil {
			if err := r.rt.forHub(ctx, p, r.rt.mirror); err != nil {
				return nil, err
			}
			env, err = ResolveEnvironment(ctx, r.rt.envFiles, p, ws.BaseRef)
			var se *SetupError
			if errors.As(err, &se) {
				return nil, r.failRemote(ctx, rc.Token, ws, se.StatusCode, se.Detail)
			}
			if err != nil {
				return nil, err
			}
		}
		if env.Source == "" {
			return &RuntimeScript{}, nil
		}
		runID = NewID(r.rt.rand, name+"_")
		kept := keptEnvironment{Source: env.Source, Env: env.Env, Update: env.Update, Cache: env.Cache,
			SetupTimeout: env.SetupTimeout, Image: env.Image, Setup: env.Setup, Notes: (environments{r.rt}).remoteNotes(ws, env)}
		if env.Setup != "" {
			if kept.Caches, caches, err = (environments{r.rt}).planRemoteCaches(ctx, ws, p, env); err != nil {
				return nil, err
			}
			kept.CacheRun = runID
		}
		b, err := json.Marshal(kept)
		if err != nil {
			return nil, err
		}
		if err := r.rt.store.SetWorkspaceEnvironment(ctx, ws.ID, "", b); err != nil {
			return nil, err
		}
	case ws.State == StateResuming:
		name = ScriptUpdate
		if env, err = (environments{r.rt}).workspaceEnvironment(ctx, ws); err != nil {
			return nil, err
		}
	}
	script := ""
	if env != nil {
		script = map[string]string{ScriptSetup: env.Setup, ScriptUpdate: env.Update}[name]
	}
	if script == "" {
		return &RuntimeScript{}, nil
	}
	secrets, _, err := environments{r.rt}.secretsFor(ctx, ws, p, secretsForSetup)
	if err != nil {
		return nil, err
	}
	return &RuntimeScript{RunID: cmp.Or(runID, NewID(r.rt.rand, name+"_")), Name: name, Script: script,
		Env: append(env.EnvList(), secrets...), Timeout: env.Timeout(), KeepOut: env.cachePaths(), Caches: caches,
		CacheMaxBytes: r.rt.caches.maxBytesOrZero()}, nil
}

// remoteNotes says what of an environment a remote machine does not apply.
func (s environments) remoteNotes(ws *Workspace, env *Environment) string {
	var notes []string
	if rm := s.remoteFor(ws); env.Image != "" && (rm == nil || !rm.AppliesImages()) {
		notes = append(notes, "the image "+env.Image+" that "+env.Source+" names is not applied: the workspace runs on the provider's own image")
	}
	if len(env.Ignored) > 0 {
		notes = append(notes, env.Source+": ignored "+strings.Join(env.Ignored, ", "))
	}
	return strings.Join(notes, "; ")
}

// scriptRun checks a script run's id and says which script it is.
func scriptRun(runID string) (string, error) {
	for _, name := range []string{ScriptSetup, ScriptUpdate} {
		if ValidID(runID, name+"_") {
			return name, nil
		}
	}
	return "", Errorf(CodeInvalidRequest, "%q is not a script run's id", cut(runID, 80))
}

// ScriptOutput adds lines of a script run's output from the first-th on: lines the
// hub already has (a batch sent again) are skipped, and a run keeps at most
// MaxTurnEvents. The project's secrets are masked before anything is stored.
func (r *RuntimeAPI) ScriptOutput(ctx context.Context, rc RuntimeCaller, runID string, first int, lines []string) error {
	name, err := scriptRun(runID)
	if err != nil {
		return err
	}
	if first < 0 || len(lines) > MaxEventsBatch {
		return Errorf(CodeInvalidRequest, "first must be 0 or more, and a batch at most %d lines", MaxEventsBatch)
	}
	return r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
		mask, err := r.maskIn(ctx, q, ws)
		if err != nil {
			return err
		}
		events := make([]TurnEvent, len(lines))
		for i, line := range lines {
			events[i] = TurnEvent{Type: EventSetupOutput, Tool: name, Delta: mask.Mask(line) + "\n"}
		}
		// One place is kept for the run's setup_finished.
		return r.storeRunEvents(ctx, q, ws, runID, first, MaxTurnEvents-1, events, (*TurnEvent).cleanOutput)
	})
}

// maskIn is the masker of every secret of ws's project, read in the caller's
// transaction: a batch of events costs no transaction of its own for it.
func (r *RuntimeAPI) maskIn(ctx context.Context, q Queries, ws *Workspace) (*Masker, error) {
	secrets, err := openSecrets(ctx, r.rt.kernel, q, ws.ProjectID)
	if err != nil {
		return nil, err
	}
	values := make([]string, len(secrets))
	for i, sec := range secrets {
		values[i] = sec.value
	}
	return NewMasker(values), nil
}

// mask is the masker of every secret of the caller's project.
func (r *RuntimeAPI) mask(ctx context.Context, rc RuntimeCaller) (*Masker, error) {
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return nil, err
	}
	_, values, err := environments{r.rt}.secretsFor(ctx, ws, p, secretsForSetup)
	if err != nil {
		return nil, err
	}
	return NewMasker(values), nil
}

// ScriptEnded records how a script run ended. A setup that failed fails the workspace
// (setup_failed:setup_script or setup_timeout, with its last lines) and the runtime is
// told to stop; an update that failed leaves the workspace to become ready.
func (r *RuntimeAPI) ScriptEnded(ctx context.Context, rc RuntimeCaller, runID string, end RuntimeScriptEnd) error {
	name, err := scriptRun(runID)
	if err != nil {
		return err
	}
	switch end.Outcome {
	case OutcomeCompleted, OutcomeError, OutcomeInterrupted:
	default:
		return Errorf(CodeInvalidRequest, "outcome must be completed, interrupted or error")
	}
	mask, err := r.mask(ctx, rc)
	if err != nil {
		return err
	}
	ws, _, err := r.caller(ctx, rc, false)
	if err != nil {
		return err
	}
	env, err := environments{r.rt}.workspaceEnvironment(ctx, ws)
	if err != nil {
		return err
	}
	if env == nil {
		env = &Environment{Source: "the environment"}
	}
	tail := &setupTail{}
	for _, l := range end.Tail[:min(len(end.Tail), maxSetupTailLines)] {
		tail.add(mask.Mask(strings.ToValidUTF8(l, "\uFFFD")))
	}
	res := ScriptResult{ExitCode: end.ExitCode, Interrupted: end.Outcome == OutcomeInterrupted, Limit: mask.Mask(cut(end.Limit, 500))}
	if end.Outcome == OutcomeError && end.ExitCode == 0 && end.Limit == "" {
		res.Err = errors.New("the machine could not start it")
	}
	var fail *SetupError
	if end.Outcome != OutcomeCompleted || end.ExitCode != 0 {
		if err := scriptFailure(ctx, env, name, res, tail); err != nil {
			if !errors.As(err, &fail) {
				return err
			}
		}
	}
	reason := ""
	if fail != nil {
		reason = fail.Detail
	}
	if end.Lines < 0 {
		return Errorf(CodeInvalidRequest, "lines must be 0 or more")
	}
	err = r.locked(ctx, rc, func(q Queries, ws *Workspace) error {
		have, err := q.CountTurnEvents(ctx, ws.ID, runID)
		if err != nil {
			return err
		}
		if have > min(end.Lines, MaxTurnEvents-1) {
			return nil // recorded by an earlier attempt
		}
		e := &TurnEvent{WorkspaceID: ws.ID, TurnID: runID, Type: EventSetupFinished, Tool: name,
			Outcome: end.Outcome, Reason: reason, CreatedAt: r.rt.clock.Now()}
		return r.rt.in(ctx, q).runningTurnEvents(ws.ID, runID, true, e)
	})
	if err == nil && name == ScriptSetup {
		err = r.endCacheRun(ctx, ws, runID)
	}
	if err != nil || fail == nil || name != ScriptSetup {
		return err
	}
	return r.failRemote(ctx, rc.Token, ws, fail.StatusCode, fail.Detail)
}

// endCacheRun stops taking the caches of a setup run that ended.
func (r *RuntimeAPI) endCacheRun(ctx context.Context, ws *Workspace, runID string) error {
	b, err := r.rt.store.WorkspaceEnvironment(ctx, ws.ID)
	if err != nil || len(b) == 0 {
		return err
	}
	var k keptEnvironment
	if err := json.Unmarshal(b, &k); err != nil || k.CacheRun != runID {
		return err
	}
	k.CacheRun, k.Caches = "", nil
	if b, err = json.Marshal(k); err != nil {
		return err
	}
	return r.rt.store.SetWorkspaceEnvironment(ctx, ws.ID, "", b)
}

// machineImage is the image a remote workspace's machine runs in, as its environment
// names it ("" none). The environment is resolved, and kept, when the machine is
// first started (the script the runtime is given later is from the same resolution);
// one that cannot be used fails the workspace before any machine starts.
func (s environments) machineImage(ctx context.Context, ws *Workspace, lease string) (string, error) {
	if s.envFiles == nil {
		return "", nil
	}
	kept, err := s.workspaceEnvironment(ctx, ws)
	if err != nil || kept != nil {
		if kept == nil {
			return "", err
		}
		return kept.Image, err
	}
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	if err != nil {
		return "", err
	}
	if err := s.forHub(ctx, p, s.mirror); err != nil {
		return "", err
	}
	if err := s.mirror.Refresh(ctx, p, s.config.MirrorMaxAge); err != nil && ctx.Err() == nil {
		s.log().Warn("mirror fetch failed; the environment is read from the mirror as it is", "workspace", ws.ID, "err", err)
	}
	env, err := ResolveEnvironment(ctx, s.envFiles, p, ws.BaseRef)
	if errors.Is(err, ErrBaseRefNotFound) {
		return "", nil // the machine's checkout fails the workspace, in the words it always has
	}
	if err != nil || env.Source == "" {
		return "", err
	}
	if err := s.keepEnvironment(ctx, ws, lease, env); err != nil {
		return "", err
	}
	return env.Image, nil
}
