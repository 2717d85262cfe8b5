package chat

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

func TestEveryRefusalReadsAsASentenceWithItsPlaceholdersFilled(t *testing.T) {
	for code := range refusals {
		for _, p := range []Platform{Slack, Discord} {
			got := p.Refusal(core.Errorf(code, "detail"))
			if strings.Contains(got, "%!") || strings.Contains(got, "{team}") || strings.Contains(got, "{bind}") {
				t.Errorf("%s on %s: expected a plain sentence, got %q", code, p.Team, got)
			}
		}
	}
	if got := Slack.Refusal(core.Errorf(core.CodeChatNotBound, "")); !strings.Contains(got, "This Slack workspace isn't connected") ||
		!strings.Contains(got, "`"+Slack.Bind+"`") {
		t.Errorf("expected the team word and the bind command in the not-bound refusal, got %q", got)
	}
}

func TestFailureNoticeWordsEachStatusCode(t *testing.T) {
	cases := map[string]string{
		"setup_failed:base_ref_not_found": "failed (its checkout could not be set up: the base branch or commit does not exist)",
		"setup_failed:checkout":           "failed (its checkout could not be set up)",
		"provision_failed:disk":           "failed (its machine could not be provisioned)",
		"machine_lost":                    "failed (its machine was lost)",
		"something_new":                   "failed (the hub could not keep it running)",
	}
	for code, want := range cases {
		got := Slack.FailureNotice("ws_1", code)
		if !strings.Contains(got, "Workspace `ws_1` "+want) || !strings.Contains(got, "Start a new thread") {
			t.Errorf("%s: expected %q and how to go on, got %q", code, want, got)
		}
	}
}

func TestQuotaRefusalSaysWhichLimitAndHowToGetMore(t *testing.T) {
	err := core.Errorf(core.CodeQuotaExceeded, "the account has 3 live workspaces: this account's limit is 3. Ask the operator")
	got := Slack.Refusal(err)
	if !strings.Contains(got, "quota") || !strings.Contains(got, "limit is 3") || got == GenericRefusal {
		t.Fatalf("expected the quota named in words, got %q", got)
	}
}
