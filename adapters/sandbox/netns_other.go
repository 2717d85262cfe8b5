//go:build !linux

package sandbox

import "syscall"

// A "full" network is a user and network namespace with pasta attached (netns.go):
// Linux only. bwrap.go names the configuration and process.go the steps; nothing
// runs them here (New answers ErrNeedsLinux).

func (c netConfig) onHost() (netConfig, error) { return c, ErrNeedsLinux }

func (c netConfig) readyFIFO() (string, func(), error) { return "", nil, ErrNeedsLinux }

func enterCommand(netConfig, string, []string) (string, string, []string, *syscall.SysProcAttr) {
	return "", "", nil, nil
}

type sandboxPasta struct{}

func startPasta(netConfig, int, string) (*sandboxPasta, error) { return nil, ErrNeedsLinux }

func (p *sandboxPasta) endedEarly() <-chan struct{} { return nil }

func (p *sandboxPasta) stop() {}

func (p *sandboxPasta) failure() string { return ErrNeedsLinux.Error() }

type keptNet struct{}

func (n *keptNet) enter(path string, args []string) (string, []string) { return path, args }

func (n *keptNet) servedBy() *sandboxPasta { return nil }

type netKeeper struct{}

func newNetKeeper(Config, string) *netKeeper { return nil }

func (k *netKeeper) close() {}
