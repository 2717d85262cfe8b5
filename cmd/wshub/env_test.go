package main

import (
	"maps"
	"os"
	"strings"
	"testing"
)

// testEnviron is the test process's environment with changes: "NAME=value" sets a
// variable, a bare "NAME" unsets it. A command run with it reads it and never the
// process's, so that this package's tests run side by side (no t.Setenv).
func testEnviron(changes ...string) environ {
	return environ{vars: varsOf(os.Environ())}.with(changes...)
}

// with is a copy of e with changes, as testEnviron takes them.
func (e environ) with(changes ...string) environ {
	e.vars = maps.Clone(e.vars)
	for _, c := range changes {
		if name, value, ok := strings.Cut(c, "="); ok {
			e.vars[name] = value
		} else {
			delete(e.vars, c)
		}
	}
	return e
}

// A command's environment is its own: what a runtime takes out of it (its token) is
// gone from it, and from nothing else, unless it is the process's.
func TestEnvironTakeRemovesFromTheCommandsOwnOnly(t *testing.T) {
	t.Parallel()
	const name = "WSHUB_TEST_ENVIRON_TAKE"
	env := testEnviron(name + "=secret")
	if got := env.take(name); got != "secret" {
		t.Fatalf("expected take to return the value, got %q", got)
	}
	if v, ok := env.lookup(name); ok {
		t.Fatalf("expected the variable gone from the command's environment, got %q", v)
	}
	if strings.Contains(strings.Join(env.list(), "\n"), name) {
		t.Fatalf("expected the variable gone from what the command passes on, got %v", env.list())
	}
	if other := testEnviron(name + "=kept"); other.get(name) != "kept" {
		t.Fatalf("expected another command's environment untouched, got %q", other.get(name))
	}
	if got := (environ{vars: varsOf([]string{"A=1", "A=2", "B"})}).list(); strings.Join(got, " ") != "A=1" {
		t.Fatalf("expected the first of a repeated name, as os.Getenv, and no entry without '=', got %v", got)
	}
}
