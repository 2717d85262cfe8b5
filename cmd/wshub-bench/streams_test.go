package main

import "testing"

// -only B8 replaces B8's part of the report and keeps the rest, or appends it to a
// report that has none.
func TestSpliceB8(t *testing.T) {
	section := b8Begin + "\nnew figures\n" + b8End + "\n"
	for _, tc := range []struct{ name, report, want string }{
		{"no report yet", "", section},
		{"a report without B8", "# Benchmarks\n\nB1\n", "# Benchmarks\n\nB1\n\n" + section},
		{"a report with B8", "# Benchmarks\n\n" + b8Begin + "\nold figures\n" + b8End + "\n\nafter\n",
			"# Benchmarks\n\n" + section + "after\n"},
	} {
		if got := splice(tc.report, b8Begin, b8End, section); got != tc.want {
			t.Errorf("%s: expected %q, got %q", tc.name, tc.want, got)
		}
	}
}
