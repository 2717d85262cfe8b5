//go:build !linux

package sandbox

import "errors"

// etcView is Linux's (the sandbox is bubblewrap's): elsewhere /etc is bound file by file.
type etcView struct{}

func newEtcView(string, []string) (*etcView, error) { return nil, nil }

func (*etcView) refresh() (etcMounts, error) { return etcMounts{}, errors.ErrUnsupported }
