// Package machines holds the machine providers workspaces run on. The local provider
// runs them on the hub's own host, unless WSHUB_PROVIDERS leaves it out.
package machines

import (
	"context"
	"fmt"
	"runtime"

	"github.com/wshub/wshub/core"
)

// LocalSizeID is the one size of the local provider: the whole host.
const LocalSizeID = "host"

// Local is the core.Providers of a hub configured with only the local provider.
// The host's size is read once, at construction: the catalog is a description for
// clients, and re-reading /proc on every request would buy nothing.
type Local struct {
	provider core.Provider
	// off: this hub runs no workspace on its own host (WSHUB_PROVIDERS leaves local out).
	off bool
	// more are the other providers this hub is configured with (process).
	more []core.Provider
	// def is the provider a create that names none gets ("": local, else the first).
	def string
}

// Add lists another provider after the local one.
func (l *Local) Add(p core.Provider) { l.more = append(l.more, p) }

// DisableLocal leaves the local provider out: it is not listed, nor the default.
func (l *Local) DisableLocal() { l.off = true }

// LocalEnabled reports whether workspaces may run on this host.
func (l *Local) LocalEnabled() bool { return !l.off }

// SetDefault makes id the provider of creates that name none (WSHUB_DEFAULT_PROVIDER);
// it must be listed.
func (l *Local) SetDefault(id string) error {
	for _, p := range l.List(context.Background()) {
		if p.ID == id {
			l.def = id
			return nil
		}
	}
	return fmt.Errorf("the default provider %q is not one of this hub's providers (WSHUB_PROVIDERS)", id)
}

// HostSize is this host's one size, for providers that run on it.
func (l *Local) HostSize() core.ProviderSize { return l.provider.Sizes[0] }

var _ core.Providers = (*Local)(nil)

// NewLocal describes this host from runtime.NumCPU and /proc/meminfo. Where meminfo
// cannot be read (not Linux, a sandbox), the size reports 0 MiB rather than failing:
// the hub still works, the catalog is only less informative.
func NewLocal() *Local {
	return newLocal(runtime.NumCPU(), memTotalMiB(meminfoPath))
}

// NewLocalSized is NewLocal with the size of every workspace set (WSHUB_LOCAL_CPU,
// WSHUB_LOCAL_MEMORY_MIB): each turn is held to it. A zero or negative field is the
// host's.
func NewLocalSized(vcpus int, memMiB int64) *Local {
	if vcpus <= 0 && memMiB <= 0 {
		return NewLocal()
	}
	if vcpus <= 0 {
		vcpus = runtime.NumCPU()
	}
	if memMiB <= 0 {
		memMiB = memTotalMiB(meminfoPath)
	}
	l := newLocal(vcpus, memMiB)
	l.provider.Sizes[0].DisplayName = fmt.Sprintf("%d vCPU, %d MiB", vcpus, memMiB)
	return l
}

func newLocal(vcpus int, memMiB int64) *Local {
	return &Local{provider: core.Provider{
		ID:            core.LocalProviderID,
		DisplayName:   "This host",
		BillingSource: "service",
		Sizes: []core.ProviderSize{{
			ID:          LocalSizeID,
			DisplayName: sizeName(vcpus, memMiB),
			VCPUCount:   vcpus,
			MemoryMiB:   memMiB,
		}},
	}}
}

// sizeName reads like "Host (2 vCPU, 23.4 GiB)"; the memory is left out when unknown.
func sizeName(vcpus int, memMiB int64) string {
	if memMiB <= 0 {
		return fmt.Sprintf("Host (%d vCPU)", vcpus)
	}
	return fmt.Sprintf("Host (%d vCPU, %.1f GiB)", vcpus, float64(memMiB)/1024)
}

// List returns the enabled providers, local first. The slices are copies, so a caller that edits
// its result does not change the catalog.
func (l *Local) List(context.Context) []core.Provider {
	out := make([]core.Provider, 0, 1+len(l.more))
	all := l.more
	if !l.off {
		all = append([]core.Provider{l.provider}, l.more...)
	}
	for _, p := range all {
		p.Sizes = append([]core.ProviderSize(nil), p.Sizes...)
		out = append(out, p)
	}
	return out
}

// Default is the provider set as the default, else local when it is enabled, else the
// first listed.
func (l *Local) Default() string {
	switch {
	case l.def != "":
		return l.def
	case !l.off:
		return core.LocalProviderID
	case len(l.more) > 0:
		return l.more[0].ID
	}
	return ""
}
