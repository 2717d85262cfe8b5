//go:build !unix

package procgroup

import (
	"fmt"
	"runtime"
	"syscall"
)

// Attr is no group at all: this system has none.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// Signal refuses.
func Signal(int, syscall.Signal) error {
	return fmt.Errorf("process groups need a Unix system, not %s", runtime.GOOS)
}

// Alive says no: nothing here was started in a group.
func Alive(int) bool { return false }

// Of refuses, as Signal does.
func Of(int) (int, error) { return 0, Signal(0, 0) }
