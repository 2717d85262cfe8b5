package core

import "testing"

// The bindings are part of every sealed value already stored: a changed string would
// leave those values unopenable. Each kind keeps its own prefix.
func TestSealBindingsAreStableAndDistinctPerKind(t *testing.T) {
	want := map[SealedKind]string{
		SealedMessageText:       "message:ws_1:msg_2",
		SealedMessageFailure:    "failure:ws_1:msg_2",
		SealedWebhookSecret:     "webhook:ws_1:msg_2",
		SealedEventBody:         "event:ws_1:msg_2",
		SealedChatEvent:         "chatevent:ws_1:msg_2",
		SealedChatNotice:        "chatnotice:ws_1:msg_2",
		SealedTurnEvent:         "turn-event:ws_1:msg_2",
		SealedProjectCredential: "credential:ws_1:msg_2",
		SealedProjectSecret:     "project-secret:ws_1:msg_2",
		SealedForgeSecret:       "forge-secret:ws_1:msg_2",
		SealedAsset:             "asset:ws_1:msg_2",
		SealedWorkspaceTitle:    "workspace-title:ws_1:msg_2",
		SealedSchedulePrompt:    "schedule-prompt:ws_1:msg_2",
		SealedGitHubAppSecret:   "github-app-secret:ws_1:msg_2",
		SealedGitHubAppKey:      "github-app-key:ws_1:msg_2",
	}
	if len(SealedKinds) != len(want) {
		t.Fatalf("%d kinds, %d expected bindings: a new kind needs its binding here", len(SealedKinds), len(want))
	}
	seen := map[string]SealedKind{}
	for _, k := range SealedKinds {
		got := k.binding("ws_1", "msg_2")
		if got != want[k] {
			t.Errorf("%s binds %q, want %q", k, got, want[k])
		}
		if other, dup := seen[sealPrefixes[k]]; dup {
			t.Errorf("%s and %s share the prefix %q", k, other, sealPrefixes[k])
		}
		seen[sealPrefixes[k]] = k
	}
}
