package agents

import (
	"strings"
	"testing"
)

// The rules a "full" sandbox's script adds: exceptions before refusals, each family in
// its own batch, a duplicate once, and nothing that is not an address reaching the
// script.
func TestNetRulesAreCanonicalAndSplitByFamily(t *testing.T) {
	c := netConfig{
		Allow: []egressRule{{Net: "203.0.113.0/24"}, {Net: "2001:db8::1/128", Port: 443}},
		Refuse: []string{"10.0.0.0/8", "fc00::/7", "10.0.0.0/8", "192.0.2.7/32",
			"1.2.3.4/32\nlink set lo down", "$(touch /tmp/x)"},
	}
	v4, v6 := netRules(c)
	wantV4 := "rule add to 203.0.113.0/24 pref 1000 lookup main\n" +
		"rule add to 169.254.0.53/32 pref 1000 lookup main ipproto udp dport 53\n" +
		"rule add to 169.254.0.53/32 pref 1000 lookup main ipproto tcp dport 53\n" +
		"rule add to 10.0.0.0/8 pref 2000 prohibit\n" +
		"rule add to 192.0.2.7/32 pref 2000 prohibit\n"
	if v4 != wantV4 {
		t.Errorf("expected the IPv4 rules\n%s\ngot\n%s", wantV4, v4)
	}
	wantV6 := "rule add to 2001:db8::1/128 pref 1000 lookup main ipproto tcp dport 443\n" +
		"rule add to fc00::/7 pref 2000 prohibit\n"
	if v6 != wantV6 {
		t.Errorf("expected the IPv6 rules\n%s\ngot\n%s", wantV6, v6)
	}
	script := enterScript(c)
	for _, bad := range []string{"touch", "lo down"} {
		if strings.Contains(script, bad) {
			t.Errorf("expected %q kept out of the script:\n%s", bad, script)
		}
	}
}
