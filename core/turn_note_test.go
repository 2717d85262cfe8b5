package core

import (
	"strings"
	"testing"
)

func TestReplySaysWhatTheHubDidNotCommit(t *testing.T) {
	reply, _ := replyOf(TurnResult{Reply: "done", Commit: TurnCommit{Committed: true, SHA: strings.Repeat("a", 40),
		LeftOut: "x: an embedded repository whose .git holds a symlink\nb`c: an embedded repository whose .git is a symlink\n"}}, "wshub/b")
	want := "done\n\n---\nNot committed:\n- `x: an embedded repository whose .git holds a symlink`\n- `b'c: an embedded repository whose .git is a symlink`"
	if reply != want {
		t.Fatalf("expected\n%q\ngot\n%q", want, reply)
	}
}
