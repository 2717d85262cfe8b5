//go:build !windows

package main

import (
	"os"
	"syscall"
)

// reexec replaces this process with this binary run again with argv and vars; it
// returns only when it could not.
func reexec(argv, vars []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(self, argv, vars)
}
