package core

import (
	"fmt"
	"io"
	"strings"
)

const maxRefChars = 200

// validateRef checks a baseRef (allowHash) or branch name against the characters api.md
// allows and the rules of git check-ref-format, so the name is usable as typed.
func validateRef(field, ref string, allowHash bool) error {
	bad := func(why string) error {
		return Errorf(CodeInvalidGitRef, "%s %s", field, why)
	}
	if ref == "" {
		return bad("must not be empty")
	}
	if len(ref) > maxRefChars {
		return bad(fmt.Sprintf("must be at most %d characters", maxRefChars))
	}
	for _, c := range ref {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '/' || c == '-' || (allowHash && c == '#')
		if !ok {
			return bad(fmt.Sprintf("contains %q, which is not allowed", c))
		}
	}
	switch {
	case !allowHash && ref == "HEAD":
		return bad("must not be HEAD, which git does not allow as a branch name")
	case strings.HasPrefix(ref, "-"), strings.HasPrefix(ref, "/"), strings.HasPrefix(ref, "."):
		return bad("must not start with '-', '/' or '.'")
	case strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, "."), strings.HasSuffix(ref, ".lock"):
		return bad("must not end with '/', '.' or '.lock'")
	case strings.Contains(ref, ".."), strings.Contains(ref, "//"), strings.Contains(ref, "/."):
		return bad("must not contain '..', '//' or '/.'")
	case strings.Contains(ref, ".lock/"): // git refuses a .lock suffix on any component
		return bad("must not have a component ending in '.lock'")
	}
	return nil
}

var (
	branchAdjectives = []string{"amber", "brave", "calm", "deft", "eager", "fair", "glad", "hardy", "keen", "lucid", "merry", "nimble", "plucky", "quick", "rapid", "steady", "tidy", "vivid", "witty", "zesty"}
	branchNouns      = []string{"otter", "falcon", "maple", "comet", "harbor", "lantern", "meadow", "pebble", "quill", "raven", "summit", "thistle", "willow", "ember", "fjord", "glacier", "heron", "island", "juniper", "kestrel"}
)

// GenerateBranch returns <adjective>-<noun>-<6 base36>; the caller retries on collision.
func GenerateBranch(r io.Reader) string {
	b := randomBytes(r, 8)
	const base36 = "0123456789abcdefghijklmnopqrstuvwxyz"
	var suffix [6]byte
	for i := range suffix {
		suffix[i] = base36[int(b[2+i])%36]
	}
	return branchAdjectives[int(b[0])%len(branchAdjectives)] + "-" + branchNouns[int(b[1])%len(branchNouns)] + "-" + string(suffix[:])
}
