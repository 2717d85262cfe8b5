package core

import (
	"strings"
	"testing"
)

// A title is the first line with words, spaces folded, at most 80 characters and an
// ellipsis.
func TestTitleFrom(t *testing.T) {
	long := strings.Repeat("é", 100)
	for in, want := range map[string]string{
		"":                              "",
		" \n\t\n":                       "",
		"Fix the bug":                   "Fix the bug",
		"\n\n  Fix   the\tbug  \nmore":  "Fix the bug",
		"one\u00a0two":                  "one two",
		long:                            strings.Repeat("é", 80) + "…",
		strings.Repeat("é", 80) + "\nx": strings.Repeat("é", 80),
	} {
		if got := TitleFrom(in); got != want {
			t.Errorf("TitleFrom(%q): expected %q, got %q", in, want, got)
		}
	}
}
