package sandbox

import "errors"

// ErrNeedsLinux is New's answer on any other system: every agent process runs in a
// bubblewrap sandbox, with its own namespaces and a cgroup of its own, and only Linux
// has them. The configuration (Config, LimitsConfig) builds everywhere, so the CLI and
// a hub whose machines are elsewhere build and run.
var ErrNeedsLinux = errors.New("running agents on this machine needs Linux (bubblewrap, namespaces, cgroups)")
