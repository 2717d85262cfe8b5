// Package shellword writes a value as one word of a POSIX shell command line.
package shellword

import "strings"

// Quote is s as one word of sh, taken literally: single-quoted, each ' closed,
// escaped and reopened.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
