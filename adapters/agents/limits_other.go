//go:build !linux

package agents

import "github.com/wshub/wshub/core"

// The configuration of turns' limits, as limits.go has it on Linux, so that the hub's
// and the runtime's configuration reads the same everywhere; there are no cgroups here
// and New refuses before it looks at them.

// Limits modes (WSHUB_AGENT_LIMITS).
const (
	LimitsCgroup = "cgroup"
	LimitsOff    = "off"
)

// LimitsConfig says how turns are held to their workspace's size.
type LimitsConfig struct {
	Mode    string
	PidsMax int64
	Size    core.ProviderSize
}

// cgroupHierarchy is never made here.
type cgroupHierarchy interface{ String() string }

func newCgroups() (cgroupHierarchy, error) { return nil, ErrNeedsLinux }

func cgroupScope(string) string { return "" }
