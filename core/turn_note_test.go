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

func TestReplySaysTheWorkWasNotCommitted(t *testing.T) {
	reply, _ := replyOf(TurnResult{Reply: "done", Commit: TurnCommit{Failed: true}}, "wshub/b")
	if !strings.HasSuffix(reply, "The hub could not commit this turn's work: it stays in the workspace, and the next turn's commit takes it.") {
		t.Fatalf("expected the reply to say the work was not committed, got %q", reply)
	}
}
