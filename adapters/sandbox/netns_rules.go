//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Rule priorities: the exceptions are looked at before the refusals, both after the
// local table (priority 0), so the sandbox's own addresses and loopback stay its own.
const (
	allowPriority  = 1000
	refusePriority = 2000
)

// netStartSeconds bounds the wait for pasta to configure the sandbox's interface.
const netStartSeconds = 20

// enterScript is what the first process of a "full" sandbox runs, root in its new user
// and network namespaces. Its arguments: the FIFO pasta writes its pid to once it has
// configured the interface ("-": no pasta); the paths of ip, timeout and cat (found by
// the hub: the agent's PATH may not name /usr/sbin); the cgroup.procs files to join;
// "--"; and the command (bubblewrap's). It joins the cgroup first (writing 0 moves the
// writer, the shell itself: echo is a builtin), waits for pasta, sets the loopback up
// and adds the policy rules, one `ip -batch` per family (a batch takes one), and execs
// the command. The rules come after pasta has configured the namespace because the
// kernel checks a route's gateway through them when the route is added: with the
// host's own network refused first, pasta's default route (via the host's gateway,
// on that network) would be refused. Nothing but the script runs in the namespace
// until the rules are there. Every failure is told on standard error, which the turn
// reports, with status 125 (an agent error, not a missing agent). The rules are the
// only part made per turn, and they hold nothing but canonical addresses, numbers and
// keywords (netRules).
func enterScript(c netConfig) string {
	return scriptHead + joinLoop + rulesScript(c) + `exec "$@"
`
}

// holdScript is what the holder of a kept namespace pair runs (netkeep.go), with the
// same arguments as enterScript's but no cgroup and no command: it sets the network up
// as enterScript does, says "ready" on standard output, and then waits, as cat, for
// its standard input (the hub's) to close.
func holdScript(c netConfig) string {
	return scriptHead + rulesScript(c) + `echo ready
exec "$cat"
`
}

// scriptHead reads the arguments every script of the namespaces starts with.
const scriptHead = `fail() { echo "the sandbox's network could not be set up: $1" >&2; exit 125; }
ready=$1 ip=$2 timeout=$3 cat=$4; shift 4
`

// rulesScript waits for pasta, sets the loopback up and adds c's policy rules.
func rulesScript(c netConfig) string {
	v4, v6 := netRules(c)
	return `if [ "$ready" != - ]; then
	pid=$("$timeout" ` + strconv.Itoa(netStartSeconds) + ` "$cat" -- "$ready") && [ -n "$pid" ] || fail "pasta did not configure the network within ` + strconv.Itoa(netStartSeconds) + `s"
fi
"$ip" -4 -batch - <<'.' || fail "ip -4 could not add the rules"
link set lo up
` + v4 + `.
"$ip" -6 -batch - <<'.' || fail "ip -6 could not add the rules"
` + v6 + `.
`
}

// netRules are the policy rules of c as `ip rule` commands, IPv4's and IPv6's: the
// exceptions (DNS to pasta's forwarder among them) and, behind them, the refusals. Each
// address is parsed and written out again, so nothing but an address reaches the
// script; a duplicate (an address both refused by range and the host's own) is left
// out, as the kernel would refuse it.
func netRules(c netConfig) (v4, v6 string) {
	var b4, b6 strings.Builder
	seen := map[string]bool{}
	add := func(cidr, line string) {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			return // not made by the hub: the allow list and refusals are parsed already
		}
		rule := fmt.Sprintf("rule add to %s %s\n", n, line)
		if seen[rule] {
			return
		}
		seen[rule] = true
		if n.IP.To4() != nil {
			b4.WriteString(rule)
		} else {
			b6.WriteString(rule)
		}
	}
	allow := append(append([]egressRule(nil), c.Allow...),
		egressRule{Net: sandboxDNS + "/32", Port: 53, Proto: "udp"}, egressRule{Net: sandboxDNS + "/32", Port: 53})
	for _, a := range allow {
		line := fmt.Sprintf("pref %d lookup main", allowPriority)
		if a.Port != 0 {
			proto := "tcp"
			if a.Proto == "udp" {
				proto = "udp"
			}
			line += fmt.Sprintf(" ipproto %s dport %d", proto, a.Port)
		}
		add(a.Net, line)
	}
	for _, n := range c.Refuse {
		add(n, fmt.Sprintf("pref %d prohibit", refusePriority))
	}
	return b4.String(), b6.String()
}
