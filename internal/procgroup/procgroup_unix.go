//go:build unix

// Package procgroup starts a process as the leader of a process group of its own and
// signals the whole group, so that what it started goes with it. Unix systems have
// process groups; elsewhere Signal refuses (the agent runner and the process provider,
// its only users, run on Linux only).
package procgroup

import "syscall"

// Attr starts a process as the leader of a new process group, whose id is its pid.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Signal sends sig to every process of the group pgid.
func Signal(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// Alive says whether the process pid is still there (signal 0).
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// Of is the process group of pid.
func Of(pid int) (int, error) { return syscall.Getpgid(pid) }
