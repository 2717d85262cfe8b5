package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// environ is what a command reads of the process that runs it, besides its arguments
// and its output: the environment variables it takes its settings from, the working
// directory its relative paths start at and its standard input. main builds the one
// of the process (processEnviron); a test gives each command its own, so commands run
// side by side in one test binary, and what they start (runtimes, agents) gets the
// environment the command was given. No other code of the command reads the
// process's environment (internal/layers holds it to that).
type environ struct {
	vars  map[string]string
	dir   string // "": the process's working directory
	stdin io.Reader
	// process is set on the process's own environ: what take removes is unset there
	// too, so that no child inherits it.
	process bool
}

// processEnviron is the environment of this process, read once, by main.
func processEnviron() environ {
	return environ{vars: varsOf(os.Environ()), stdin: os.Stdin, process: true}
}

// varsOf reads os.Environ's form; when a name repeats the first value wins, as with
// os.Getenv.
func varsOf(list []string) map[string]string {
	vars := make(map[string]string, len(list))
	for _, kv := range list {
		name, value, ok := strings.Cut(kv, "=")
		if _, seen := vars[name]; ok && !seen {
			vars[name] = value
		}
	}
	return vars
}

func (e environ) lookup(name string) (string, bool) {
	v, ok := e.vars[name]
	return v, ok
}

// get is the variable's value, "" when it is unset.
func (e environ) get(name string) string { return e.vars[name] }

// list is the environment in os.Environ's form, sorted.
func (e environ) list() []string {
	out := make([]string, 0, len(e.vars))
	for name, value := range e.vars {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}

// take reads a variable and removes it, so that nothing the command starts later
// (an agent, git) inherits it: a credential handed over in the environment.
func (e environ) take(name string) string {
	v := e.vars[name]
	delete(e.vars, name)
	if e.process {
		_ = os.Unsetenv(name)
	}
	return v
}

// path resolves a relative path against the command's working directory.
func (e environ) path(p string) string {
	if e.dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

// input is the command's standard input.
func (e environ) input() io.Reader {
	if e.stdin == nil {
		return strings.NewReader("")
	}
	return e.stdin
}
