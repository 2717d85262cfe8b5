package wsruntime

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// prepare runs the project environment's script the hub gives (setup before the
// first turn, update on a resume) in the sandbox, as the hub's local provider does:
// its output relayed as it comes, how it ended reported, and what setup wrote kept
// out of the turns' commits. A setup that failed is the hub's to judge: it fails the
// workspace and answers runtime_stopped, which ends this runtime.
func (r *Runtime) prepare(ctx context.Context) error {
	var sc runtimewire.Script
	if _, err := r.hub.call(ctx, request{method: "POST", path: "/environment"}, &sc); err != nil {
		return err
	}
	if sc.RunID == "" {
		return nil
	}
	log := r.log.With("run", sc.RunID)
	started := time.Now()
	out := r.relay(ctx, sc.RunID, func(ctx context.Context, first int, batch []runtimewire.Event) error {
		lines := make([]string, len(batch))
		for i, e := range batch {
			lines[i] = e.Delta
		}
		_, err := r.hub.call(ctx, request{method: "POST", path: "/scripts/" + sc.RunID + "/output",
			json: runtimewire.ScriptOutput{First: first, Lines: lines}}, nil)
		return err
	})
	var mu sync.Mutex
	var tail []string
	lines := 0
	// What the runtime says of the caches is part of the output, counted with it.
	say := func(line string) {
		mu.Lock()
		lines++
		mu.Unlock()
		out.add(core.TurnEvent{Type: core.EventSetupOutput, Delta: line})
	}
	r.restoreCaches(ctx, &sc, say)
	timeout := time.Duration(sc.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = core.DefaultSetupTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := r.runner.RunScript(sctx, core.ScriptRequest{WorkspaceID: r.hello.WorkspaceID, RunID: sc.RunID, Name: sc.Name,
		Script: sc.Script, Dir: r.checkoutDir(), Home: filepath.Join(r.cfg.Dir, "home"), Network: r.hello.Network,
		Size: core.ProviderSize{VCPUCount: r.hello.VCPUCount, MemoryMiB: r.hello.MemoryMiB}, Env: sc.Env,
		Output: func(line string) {
			mu.Lock()
			lines++
			tail = append(tail, line)
			if len(tail) > 20 {
				tail = tail[1:]
			}
			mu.Unlock()
			out.add(core.TurnEvent{Type: core.EventSetupOutput, Delta: line})
		}})
	if res.Err == nil && !res.Interrupted && res.ExitCode == 0 && res.Limit == "" && ctx.Err() == nil {
		r.saveCaches(ctx, &sc, say) // before any turn: an agent never writes a cache
	}
	out.close()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	end := runtimewire.ScriptEnd{Outcome: string(core.OutcomeCompleted), ExitCode: res.ExitCode, Limit: res.Limit,
		Tail: tail, Lines: min(lines, core.MaxTurnEvents)}
	switch {
	case res.Err != nil:
		end.Outcome, end.ExitCode = string(core.OutcomeError), 0
		end.Tail = append(end.Tail, res.Err.Error())
	case res.Interrupted:
		end.Outcome = string(core.OutcomeInterrupted)
	case res.ExitCode != 0 || res.Limit != "":
		end.Outcome = string(core.OutcomeError)
	}
	log.Info("environment script ended", "script", sc.Name, "outcome", end.Outcome, "exit", res.ExitCode,
		"took", time.Since(started).Round(time.Millisecond))
	if _, err := r.hub.call(ctx, request{method: "POST", path: "/scripts/" + sc.RunID + "/end", json: end}, nil); err != nil {
		return err
	}
	if sc.Name != core.ScriptSetup || end.Outcome != string(core.OutcomeCompleted) {
		return nil
	}
	if err := r.repo().KeepOut(ctx, r.hello.Branch, sc.KeepOut); err != nil {
		return errors.Join(errors.New("keep the setup's files out of commits"), err)
	}
	return nil
}
