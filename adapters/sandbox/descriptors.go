//go:build linux

package sandbox

import (
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor from 3 on close-on-exec. Go opens its own
// that way, and os/exec passes a child only 0-2 and the files it is given; but a
// descriptor the hub inherited (a supervisor's leak, `wshub serve 7>>file`) is open
// without the flag, and every child would get it: bubblewrap passes such descriptors
// into the sandbox, where an agent could write to a host file through it. Marked rather
// than closed: the hub may still read one it was given on purpose (the runtime's token
// descriptor).
func closeInheritedOnExec() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Kernels before 5.11: one by one. A descriptor closed meanwhile (the listing's own)
	// answers EBADF, which is fine.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}
