package chat

import (
	"strings"
	"testing"
)

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
