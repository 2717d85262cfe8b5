//go:build !linux

package agents

import (
	"context"

	"github.com/wshub/wshub/core"
)

// A turn's cgroup, its record of processes (strays.go), the hub's confined jobs
// (jobs.go) and its inherited descriptors (descriptors.go) are Linux's; New answers
// ErrNeedsLinux before any of them is needed.

func (r *Runner) run(context.Context, core.TurnRequest, invocation) exitStatus {
	return exitStatus{startErr: ErrNeedsLinux}
}

func (r *Runner) endStrays(string) error { return ErrNeedsLinux }

// Confine refuses: see jobs.go.
func (r *Runner) Confine(string) (func(string, []string) (string, []string), func() error, error) {
	return nil, nil, ErrNeedsLinux
}

func closeInheritedOnExec() {}
