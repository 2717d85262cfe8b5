// Package agents knows the four coding-agent CLIs and which of them this hub's
// machines can run.
package agents

import (
	"context"
	"os/exec"
	"strings"

	"github.com/wshub/wshub/core"
)

// Programs names the CLI program of each agent id, looked up on PATH.
var Programs = map[string]string{
	"agent_1": "claude",       // Claude Code
	"agent_2": "codex",        // Codex
	"agent_3": "cursor-agent", // Cursor Agent
	"agent_4": "grok",         // Grok CLI
}

// ProgramLookPath finds agents' programs: Claude Code and Codex at the paths the
// operator set (WSHUB_CLAUDE_PATH, WSHUB_CODEX_PATH) when set, any other program with
// lookPath (nil: exec.LookPath, on PATH). A set path that is not an executable file
// makes the agent unavailable, rather than falling back to PATH: the operator asked
// for that one.
func ProgramLookPath(claudePath, codexPath string, lookPath func(string) (string, error)) func(string) (string, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	paths := map[string]string{Programs["agent_1"]: claudePath, Programs["agent_2"]: codexPath}
	return func(program string) (string, error) {
		if p := strings.TrimSpace(paths[program]); p != "" {
			return exec.LookPath(p) // a path with a slash is checked as it is
		}
		return lookPath(program)
	}
}

// Catalog is the core.AgentCatalog of the local machines: an agent is available when
// a command is bound to its id or its program is on PATH.
type Catalog struct {
	commands map[string]string
	lookPath func(string) (string, error)
}

var _ core.AgentCatalog = (*Catalog)(nil)

// NewCatalog returns a catalog over commands (agent id -> command, as read by
// CommandsFromEnv; blank commands and unknown ids are ignored) and lookPath, which
// finds a program (nil means exec.LookPath). The map is copied.
func NewCatalog(commands map[string]string, lookPath func(string) (string, error)) *Catalog {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	return &Catalog{commands: boundCommands(commands), lookPath: lookPath}
}

// boundCommands copies commands, leaving out blank commands and unknown agent ids.
func boundCommands(commands map[string]string) map[string]string {
	bound := make(map[string]string)
	for id, cmd := range commands {
		if _, known := Programs[id]; known && strings.TrimSpace(cmd) != "" {
			bound[id] = cmd
		}
	}
	return bound
}

// Available returns the ids that can run, in agent_1..agent_4 order. PATH is searched
// on every call rather than once: an operator may install a CLI while the hub runs,
// and a PATH lookup costs a few stat calls.
func (c *Catalog) Available(context.Context) []string {
	ids := make([]string, 0, len(core.AgentIDs))
	for _, id := range core.AgentIDs {
		if _, bound := c.commands[id]; bound {
			ids = append(ids, id)
			continue
		}
		if _, err := c.lookPath(Programs[id]); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
