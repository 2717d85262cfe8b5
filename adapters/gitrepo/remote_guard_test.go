package gitrepo

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// names is a resolver of fixed answers: the names a test gives exist nowhere else, so
// git reaching a server by one proves it used the address the guard pinned.
type names map[string][]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range n[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, errors.New("no such host " + host)
	}
	return out, nil
}

// guarded is a project whose repository an owner gave in the app, with its token.
func guarded(id, repository, token string) *core.Project {
	p := withToken(proj(id, repository), token)
	p.RemoteGuarded = true
	return p
}

// A repository given in the app is reached at the address its name was checked to
// have: a name the rest of the machine cannot resolve mirrors through the guard's pin.
func TestAGuardedRemoteIsReachedAtTheAddressChecked(t *testing.T) {
	t.Parallel()
	const token = "tok_guarded_1"
	raw, _ := privateRemote(t, token)
	u, _ := url.Parse(raw)
	u.Host = "git.guarded.test:" + u.Port()
	auth := &ProjectCredentials{Guard: &RemoteGuard{Resolver: names{"git.guarded.test": {"127.0.0.1"}}, AllowLoopback: true}}
	m := &Mirror{Dir: t.TempDir(), Auth: auth}
	if _, branch, err := m.Mirror(context.Background(), guarded("prj_g", u.String(), token)); err != nil || branch != "main" {
		t.Fatalf("expected the guarded remote mirrored through its pinned address, got %q, %v", branch, err)
	}
}

// A name that resolves inside the hub's network is refused before git runs, whether
// all its addresses are inside or one of them is.
func TestAGuardedRemoteInsideTheHubsNetworkIsRefused(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "git.log")
	resolver := names{"meta.guarded.test": {"169.254.169.254"}, "mixed.guarded.test": {"8.8.8.8", "10.0.0.7"},
		"local.guarded.test": {"127.0.0.1"}}
	for _, c := range []struct{ repo, addr string }{
		{"https://meta.guarded.test/org/repo.git", "169.254.169.254"},
		{"https://mixed.guarded.test/org/repo.git", "10.0.0.7"},
		{"ssh://git@meta.guarded.test/org/repo.git", "169.254.169.254"},
		{"git@mixed.guarded.test:org/repo.git", "10.0.0.7"},
		// Loopback is inside too when the hub is not in development.
		{"https://local.guarded.test/org/repo.git", "127.0.0.1"},
		{"https://[::1]/org/repo.git", "::1"},
	} {
		m := &Mirror{Dir: t.TempDir(), Git: recordingGit(t, log), Auth: &ProjectCredentials{Guard: &RemoteGuard{Resolver: resolver}}}
		_, _, err := m.Mirror(context.Background(), guarded("prj_in", c.repo, "tok"))
		if err == nil || !strings.Contains(err.Error(), "resolves to "+c.addr+", an address inside the hub's network") {
			t.Errorf("%s: expected it refused for %s, got %v", c.repo, c.addr, err)
		}
	}
	if ran, _ := os.ReadFile(log); len(ran) > 0 {
		t.Fatalf("git ran for a refused remote:\n%s", ran)
	}
	// The same names, unguarded (the operator's repositories), are not looked up here:
	// the operator may keep repositories on the hub's network.
	if _, err := (&ProjectCredentials{Guard: &RemoteGuard{Resolver: resolver}}).For(context.Background(),
		withToken(proj("prj_op", "https://meta.guarded.test/org/repo.git"), "tok")); err != nil {
		t.Fatalf("an operator's project was checked as a guarded one: %v", err)
	}
}

// A guarded https remote that redirects is not followed: a public name cannot send
// the hub's git (and its token) on to an inside address.
func TestAGuardedRemoteThatRedirectsIsNotFollowed(t *testing.T) {
	t.Parallel()
	const token = "tok_guarded_2"
	target, _ := privateRemote(t, token)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.TrimSuffix(target, "/private.git")+r.URL.Path[len("/moved"):]+"?"+r.URL.RawQuery, http.StatusMovedPermanently)
	}))
	t.Cleanup(redirect.Close)
	moved := redirect.URL + "/moved/private.git"
	// Unguarded, git follows the first request's redirect (its default): the case is real.
	open := &ProjectCredentials{Guard: &RemoteGuard{AllowLoopback: true}}
	if _, _, err := (&Mirror{Dir: t.TempDir(), Auth: open}).Mirror(context.Background(),
		withToken(proj("prj_r0", moved), token)); err != nil {
		t.Fatalf("expected git to follow the redirect for an operator's project, got %v", err)
	}
	_, _, err := (&Mirror{Dir: t.TempDir(), Auth: open}).Mirror(context.Background(), guarded("prj_r", moved, token))
	if err == nil || !strings.Contains(err.Error(), "301") && !strings.Contains(err.Error(), "redirect") {
		t.Fatal("expected a guarded remote's redirect refused, it was followed")
	}
}

// An ssh remote is pinned by ssh's own options, quoted for the shell git runs it by.
func TestAGuardedSSHRemoteIsPinnedByItsOptions(t *testing.T) {
	t.Parallel()
	auth := &ProjectCredentials{KeyDir: t.TempDir(), Guard: &RemoteGuard{Resolver: names{"ssh.guarded.test": {"8.8.4.4"}}}}
	p := proj("prj_s", "git@ssh.guarded.test:org/repo.git")
	p.RemoteGuarded = true
	c, err := auth.For(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(c.env("/keys/k"), "\n")
	if want := "-o HostName=8.8.4.4 -o 'HostKeyAlias=ssh.guarded.test' -o ProxyCommand=none"; !strings.Contains(env, want) {
		t.Fatalf("expected %q in git's environment, got:\n%s", want, env)
	}
}
