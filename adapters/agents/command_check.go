package agents

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// An agent the hub lists must be able to run. A command agent's command is run by
// sh -c inside the sandbox, so the hub reads it as sh would (mvdan.cc/sh's word
// splitting: quotes and escapes, so '/srv/my agent/run' is one path) to find its
// program and the files it names, and checks them at start rather than failing every
// turn with agent_not_installed.

// commandWords splits command as sh splits a simple command; ok is false for anything
// more (a pipe, a list, a substitution), which is run as it is, unchecked. Variables
// are not expanded: the agent's environment is not the hub's.
func commandWords(command string) (words []string, ok bool) {
	words, err := shell.Fields(command, func(string) string { return "" })
	if err != nil || len(words) == 0 || strings.ContainsAny(command, "$`|;&<>()") {
		return strings.Fields(command), false
	}
	return words, true
}

// commandFiles are the absolute paths to regular files a command names (its program,
// an interpreter's script): the sandbox shows each read-only at its own path, as the
// operator named them as the agent.
func commandFiles(command string) []string {
	words, _ := commandWords(command)
	var files []string
	for _, w := range words {
		if !filepath.IsAbs(w) {
			continue
		}
		if fi, err := os.Stat(w); err == nil && fi.Mode().IsRegular() {
			files = append(files, filepath.Clean(w))
		}
	}
	return files
}

// errAgentCannotRun: an agent the hub would list cannot run.
var errAgentCannotRun = errors.New("an agent cannot run")

// checkAgents checks every agent the catalog would list: each command agent's
// program exists, is executable and is visible in the sandbox (an absolute path is
// shown by the turn; a bare name must be on PATH in a system directory or
// WSHUB_SANDBOX_READONLY), and so is each CLI found on PATH. The error names the
// setting and the fix.
func (r *Runner) checkAgents() error {
	var problems []string
	ids := make([]string, 0, len(Programs))
	for id := range Programs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		setting := "WSHUB_AGENT_" + strings.TrimPrefix(id, "agent_") + "_COMMAND"
		if command, ok := r.commands[id]; ok {
			if err := r.checkCommand(command); err != nil {
				problems = append(problems, fmt.Sprintf("%s=%q: %v", setting, command, err))
			}
			continue
		}
		path, err := r.lookPath(Programs[id])
		if err != nil {
			continue // not installed: not listed
		}
		if !r.shows(path) {
			problems = append(problems, hiddenProgram(fmt.Sprintf("%s (%s)", clis[id].name, Programs[id]), path).Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w:\n  %s", errAgentCannotRun, strings.Join(problems, "\n  "))
	}
	return nil
}

// checkCommand checks a command agent's program; a command that is more than a
// simple command is taken as it is.
func (r *Runner) checkCommand(command string) error {
	words, simple := commandWords(command)
	if !simple {
		return nil
	}
	program := words[0]
	if shBuiltins[program] {
		return nil // sh's own (exit 127, exec …): nothing to find
	}
	switch {
	case filepath.IsAbs(program):
		fi, err := os.Stat(program)
		switch {
		case err != nil:
			return fmt.Errorf("its program %s does not exist", program)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("its program %s is not a file", program)
		case fi.Mode().Perm()&0o111 == 0:
			return fmt.Errorf("its program %s is not executable (chmod +x it)", program)
		}
		return nil // the turn shows it (commandFiles)
	case strings.Contains(program, "/"):
		return nil // relative to the checkout: the agent's own file
	}
	// sh in the sandbox searches the agent's PATH (the hub's) for it, finding only what
	// the sandbox shows.
	hidden := ""
	found := false
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		candidate := filepath.Join(cmp.Or(dir, "."), program)
		if fi, err := os.Stat(candidate); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if r.shows(candidate) {
			found = true
			break
		}
		hidden = cmp.Or(hidden, candidate)
	}
	switch {
	case !found && hidden != "":
		return fmt.Errorf("its program %s is at %s, %w: give its absolute path, install it under /usr or /opt, or add its directory to WSHUB_SANDBOX_READONLY",
			program, hidden, errProgramHidden)
	case !found:
		return fmt.Errorf("its program %s is not on PATH: install it, or give its absolute path", program)
	}
	for _, w := range words[1:] {
		if filepath.IsAbs(w) && looksLikeScript(w) && !exists(w) {
			return fmt.Errorf("its script %s does not exist", w)
		}
	}
	return nil
}

// shows reports whether the sandbox shows path (or, for a link, what it names).
func (r *Runner) shows(path string) bool {
	_, ok := r.box.Shown(path)
	return ok
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// looksLikeScript: an interpreter's argument named like a program file.
func looksLikeScript(path string) bool {
	switch filepath.Ext(path) {
	case ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".sh", ".php", ".lua":
		return true
	}
	return false
}

// shBuiltins are POSIX sh's special and regular built-ins and reserved words: a
// command starting with one names no program.
var shBuiltins = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`. : [ alias bg break cd command continue echo eval exec exit export false fc fg
		getopts hash jobs kill printf pwd read readonly return set shift test times trap true type ulimit umask
		unalias unset wait case do done elif else esac fi for if in then until while { } !`) {
		shBuiltins[w] = true
	}
}
