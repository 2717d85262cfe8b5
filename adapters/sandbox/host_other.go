//go:build !linux

package sandbox

import (
	"context"

	"github.com/wshub/wshub/core"
)

// A turn's cgroup, its record of processes (strays.go), the hub's confined work
// (confine.go) and its inherited descriptors (descriptors.go) are Linux's; New answers
// ErrNeedsLinux before any of them is needed.

func (h *Host) Run(context.Context, string, core.ProviderSize, Process) Exit {
	return Exit{StartErr: ErrNeedsLinux}
}

func (h *Host) EndStrays(string) error { return ErrNeedsLinux }

// Confine refuses: see confine.go.
func (h *Host) Confine(string) (func(string, []string) (string, []string), func() error, error) {
	return nil, nil, ErrNeedsLinux
}

func closeInheritedOnExec() {}

// preparer is prepared.go's; nothing is prepared here.
type preparer struct{}

func (p *preparer) close()          {}
func (h *Host) prepareTurns(Config) {}
