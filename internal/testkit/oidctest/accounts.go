package oidctest

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// accounts are the provider's users and the one SignInAs chose, changed by the test
// while the server reads them.
type accounts struct {
	mu     sync.Mutex
	users  map[string]User
	chosen string
}

func (a *accounts) add(u User) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// A copy of Extra: the test may go on changing its map.
	u.Extra = maps.Clone(u.Extra)
	a.users[u.Subject] = u
}

func (a *accounts) signInAs(subject string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.chosen = subject
}

// user returns the user with this subject.
func (a *accounts) user(subject string) (User, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	u, ok := a.users[subject]
	return u, ok
}

// signedIn is SignInAs's subject, "" when none is chosen.
func (a *accounts) signedIn() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.chosen
}

// list is every user, by subject, for the login page.
func (a *accounts) list() []User {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.SortedFunc(maps.Values(a.users), func(x, y User) int { return strings.Compare(x.Subject, y.Subject) })
}
