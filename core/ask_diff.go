package core

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the line-matching table of a diff (lines before × lines
// after); past it, the old text is shown removed and the new added, whole.
const maxDiffCells = 4 << 20

// unifiedDiff is a unified diff of before and after, as the edit of file path: one
// hunk, its line numbers counted within the edited text (the file's own are not
// known here), unchanged lines kept as context.
func unifiedDiff(path, before, after string) string {
	a, b := splitLines(before), splitLines(after)
	var body strings.Builder
	for _, op := range diffLines(a, b) {
		body.WriteString(op)
		body.WriteByte('\n')
	}
	return fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ -%s +%s @@\n%s", path, path, hunkRange(len(a)), hunkRange(len(b)), body.String())
}

func hunkRange(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines matches a and b by their longest common subsequence of lines and gives
// the lines prefixed " ", "-" or "+".
func diffLines(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out = append(out, "-"+l)
		}
		for _, l := range b {
			out = append(out, "+"+l)
		}
		return out
	}
	// lcs[i][j]: the common subsequence's length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, " "+a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}
