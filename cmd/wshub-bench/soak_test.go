package main

import "testing"

// make soak rewrites the one-hub report and keeps the two-hub section; make soak HUBS=2
// rewrites that section alone.
func TestSoakReportKeepsTheOtherModesPart(t *testing.T) {
	two := soakReplicasBegin + "\n## 2 hubs\nold run\n" + soakReplicasEnd + "\n"
	one, replicas := &soak{}, &soak{hubs: []*soakHub{{name: "a"}, {name: "b"}}}
	for _, tc := range []struct {
		name        string
		s           *soak
		old, report string
		want        string
	}{
		{"one hub, no file yet", one, "", "# Soak\nnew\n", "# Soak\nnew\n"},
		{"one hub over a one-hub report", one, "# Soak\nold\n", "# Soak\nnew\n", "# Soak\nnew\n"},
		{"one hub over both", one, "# Soak\nold\n\n" + two, "# Soak\nnew\n", "# Soak\nnew\n\n" + two},
		{"two hubs, no file yet", replicas, "", two, two},
		{"two hubs over a one-hub report", replicas, "# Soak\nold\n", two, "# Soak\nold\n\n" + two},
		{"two hubs over both", replicas, "# Soak\nold\n\n" + soakReplicasBegin + "\nolder\n" + soakReplicasEnd + "\n", two,
			"# Soak\nold\n\n" + two},
	} {
		if got := tc.s.place(tc.old, tc.report); got != tc.want {
			t.Errorf("%s: expected %q, got %q", tc.name, tc.want, got)
		}
	}
}
