//go:build !linux

package sandbox

import "log/slog"

// There are no cgroups here, and New refuses before it looks for them.

// cgroupHierarchy is never made here.
type cgroupHierarchy interface{ String() string }

func newCgroups(*slog.Logger) (cgroupHierarchy, error) { return nil, ErrNeedsLinux }

func cgroupScope(string) string { return "" }
