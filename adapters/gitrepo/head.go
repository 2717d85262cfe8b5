package gitrepo

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// CommitStats describe a commit: its id and what it changed.
type CommitStats struct {
	SHA                          string
	Files, Insertions, Deletions int
}

var shortstat = regexp.MustCompile(`(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?`)

// Head describes the checkout's HEAD commit.
func (c *Checkout) Head(ctx context.Context, branch string) (CommitStats, error) {
	if err := c.secure(branch); err != nil {
		return CommitStats{}, err
	}
	out, err := c.git().run(ctx, c.Dir, "show", "--no-color", "--shortstat", "--format=%H", "HEAD")
	if err != nil {
		return CommitStats{}, err
	}
	sha, rest, _ := strings.Cut(strings.TrimSpace(out), "\n")
	st := CommitStats{SHA: strings.TrimSpace(sha)}
	if m := shortstat.FindStringSubmatch(rest); m != nil {
		st.Files, _ = strconv.Atoi(m[1])
		st.Insertions, _ = strconv.Atoi(m[2])
		st.Deletions, _ = strconv.Atoi(m[3])
	}
	return st, nil
}

// PushRefusal says, from a failed push, why the remote refused it: its own messages
// (a pre-receive hook's "remote: ..." lines) and the reason git reports per ref
// ("[remote rejected] ... (pre-receive hook declined)", "[rejected] ... (non-fast-forward)"),
// else git's last complaint.
func PushRefusal(err error) string {
	var ge *Error
	if !errors.As(err, &ge) {
		return err.Error()
	}
	var parts []string
	for line := range strings.Lines(ge.Stderr) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "remote:"):
			if msg := strings.TrimSpace(strings.TrimPrefix(line, "remote:")); msg != "" {
				parts = append(parts, msg)
			}
		case strings.HasPrefix(line, "! [") && strings.Contains(line, "("):
			parts = append(parts, strings.TrimSuffix(line[strings.LastIndex(line, "(")+1:], ")"))
		}
	}
	if len(parts) == 0 {
		return ge.Reason
	}
	msg := strings.Join(parts, "; ")
	if r := []rune(msg); len(r) > maxReason {
		msg = string(r[:maxReason-1]) + "…"
	}
	return msg
}
