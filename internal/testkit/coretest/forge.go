package coretest

import (
	"context"
	"fmt"
	"sync"

	"github.com/wshub/wshub/core"
)

// Forge is core's Forge in a test: pull requests kept in memory, numbered from 1. A
// test merges or closes one (SetState) as a reviewer would, or has the forge refuse
// what it is asked (Refuse).
type Forge struct {
	mu     sync.Mutex
	pulls  []*core.PullRequest
	bodies map[int64]string
	refuse *core.ForgeRefusal
	calls  []string
}

var _ core.Forge = (*Forge)(nil)

// Pulls are the pull requests opened, in order, with their bodies.
func (f *Forge) Pulls() ([]core.PullRequest, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, bodies := make([]core.PullRequest, len(f.pulls)), make([]string, len(f.pulls))
	for i, p := range f.pulls {
		out[i], bodies[i] = *p, f.bodies[p.Number]
	}
	return out, bodies
}

// Calls are the calls core made, in order ("find", "open", "update", "get").
func (f *Forge) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// SetState moves a pull request to state (core.PullRequestMerged, ...).
func (f *Forge) SetState(number int64, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pulls[number-1].State = state
}

// Refuse has every later call refused with r (nil: answered again).
func (f *Forge) Refuse(r *core.ForgeRefusal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = r
}

// call records a call and returns the refusal to answer it with (nil: none).
func (f *Forge) call(name string) error {
	f.calls = append(f.calls, name)
	if f.refuse != nil {
		return f.refuse
	}
	return nil
}

// FindPullRequest returns the newest pull request from head.
func (f *Forge) FindPullRequest(_ context.Context, _ *core.Project, head string) (*core.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("find"); err != nil {
		return nil, err
	}
	for i := len(f.pulls) - 1; i >= 0; i-- {
		if p := *f.pulls[i]; p.Head == head {
			return &p, nil
		}
	}
	return nil, core.ErrNoRows
}

// OpenPullRequest opens one.
func (f *Forge) OpenPullRequest(_ context.Context, _ *core.Project, c core.PullRequestChange) (*core.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("open"); err != nil {
		return nil, err
	}
	n := int64(len(f.pulls) + 1)
	p := &core.PullRequest{Number: n, URL: fmt.Sprintf("https://forge.example/pulls/%d", n), State: core.PullRequestOpen,
		Draft: c.Draft, Head: c.Head, Base: c.Base}
	f.pulls = append(f.pulls, p)
	if f.bodies == nil {
		f.bodies = map[int64]string{}
	}
	f.bodies[n] = c.Body
	out := *p
	return &out, nil
}

// UpdatePullRequest sets an open pull request's body.
func (f *Forge) UpdatePullRequest(_ context.Context, _ *core.Project, number int64, _, body string) (*core.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("update"); err != nil {
		return nil, err
	}
	f.bodies[number] = body
	out := *f.pulls[number-1]
	return &out, nil
}

// GetPullRequest reads one.
func (f *Forge) GetPullRequest(_ context.Context, _ *core.Project, number int64) (*core.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("get"); err != nil {
		return nil, err
	}
	out := *f.pulls[number-1]
	return &out, nil
}
