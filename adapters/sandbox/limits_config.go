package sandbox

import (
	"fmt"

	"github.com/wshub/wshub/core"
)

// The configuration of turns' limits, read the same on every system (the hub's and
// the runtime's configuration name it); the cgroups themselves are Linux's (limits.go).

// Limits modes (WSHUB_AGENT_LIMITS).
const (
	// LimitsCgroup runs each turn in a cgroup of its own: the default.
	LimitsCgroup = "cgroup"
	// LimitsOff runs turns in the hub's own cgroup: no limit of memory, processes or CPU
	// per turn. For machines where the hub cannot make cgroups, and for Pods, whose
	// resources.limits bound the runtime and its turns together.
	LimitsOff = "off"
)

// LimitsConfig says how turns are held to their workspace's size.
type LimitsConfig struct {
	// Mode is LimitsCgroup ("" means it too) or LimitsOff.
	Mode string
	// PidsMax bounds each turn's processes and threads (0: DefaultPidsMax).
	PidsMax int64
	// Size is the size of a turn whose request names none (the local provider's). A
	// zero VCPUCount or MemoryMiB leaves that resource unlimited.
	Size core.ProviderSize
	// Optional lets turns run without limits where no cgroup can be had, said in
	// Host.LimitsMissing, instead of refusing to start: for the development hub, which
	// should start on any Linux desktop; never a production one, where a turn could then
	// take the whole host.
	Optional bool
}

// open opens turns' cgroups with open. Where none can be had, an Optional config gives
// no hierarchy and says why in a sentence (missing) that also says how to get limits;
// any other refuses, saying what to do.
func (c LimitsConfig) open(open func() (cgroupHierarchy, error)) (h cgroupHierarchy, missing string, err error) {
	h, err = open()
	switch {
	case err == nil:
		return h, "", nil
	case c.Optional:
		return nil, fmt.Sprintf("agent limits are off (development only): %v. Turns run with no memory, process or CPU limit of their own; for limits, start the hub from a desktop session whose systemd can give it a delegated scope, or as a systemd service with Delegate=yes", err), nil
	}
	return nil, "", fmt.Errorf("agent limits: %w; or set WSHUB_AGENT_LIMITS=off to run turns with no memory, process or CPU limit of their own", err)
}
