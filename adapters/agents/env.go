package agents

import (
	"strconv"
	"strings"
)

// CommandsFromEnv reads WSHUB_AGENT_1_COMMAND..WSHUB_AGENT_4_COMMAND from environ
// (os.Environ form) into agent id -> command, leaving out blank values. It takes the
// environment as an argument so tests and callers need not touch the process's own.
// When a name repeats, the first value wins, as with os.Getenv.
func CommandsFromEnv(environ []string) map[string]string {
	commands := make(map[string]string)
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		n, ok := agentNumber(name)
		if !ok || strings.TrimSpace(value) == "" {
			continue
		}
		id := "agent_" + strconv.Itoa(n)
		if _, seen := commands[id]; !seen {
			commands[id] = value
		}
	}
	return commands
}

// agentNumber parses N out of WSHUB_AGENT_<N>_COMMAND for N in 1..4.
func agentNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "WSHUB_AGENT_")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, "_COMMAND")
	if !ok || len(digits) != 1 {
		return 0, false
	}
	n := int(digits[0] - '0')
	return n, n >= 1 && n <= 4
}
