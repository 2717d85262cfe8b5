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

// What a runtime says it left out always fits its report: an agent's long or many
// paths are cut, never a reason for the report to be refused.
func TestLeftOutIsFittedToTheReport(t *testing.T) {
	long := strings.Repeat("é", 2000) + ": a reason"
	many := make([]string, 30)
	for i := range many {
		many[i] = "x"
	}
	for _, left := range [][]string{{long, "a\nb"}, many} {
		rep := RuntimeReport{Outcome: OutcomeCompleted, LeftOut: FitLeftOut(left)}
		if err := rep.check(); err != nil {
			t.Fatalf("expected the fitted leftOut taken, got %v", err)
		}
	}
}
