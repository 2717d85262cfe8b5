package slack_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"go.yaml.in/yaml/v3"
)

// readManifest decodes a manifest into slack-go's Manifest type, refusing any field
// the type does not know (a misspelt key would otherwise be dropped silently by Slack's
// importer too).
func readManifest(t *testing.T, path string) *slack.Manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m slack.Manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &m
}

// TestManifestsGrantWhatTheBotUses checks both manifests against what the bot does:
// the events it handles, the Web API methods it calls, and the transport each variant
// is for.
func TestManifestsGrantWhatTheBotUses(t *testing.T) {
	for _, c := range []struct {
		path   string
		socket bool
	}{{"manifest.yaml", false}, {"manifest_socket.yaml", true}} {
		m := readManifest(t, c.path)
		// app_mention starts and drives workspaces; message.* brings thread replies in
		// "follow all" threads, public and private.
		for _, ev := range []string{"app_mention", "message.channels", "message.groups"} {
			if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, ev) {
				t.Errorf("%s: expected bot event %s", c.path, ev)
			}
		}
		// Each event needs its scope; each Web API method the bot calls needs its scope:
		// chat.postMessage, reactions.add, file downloads, file uploads, users.info.
		for _, scope := range []string{"app_mentions:read", "channels:history", "groups:history", "chat:write", "reactions:write",
			"files:read", "files:write", "users:read"} {
			if !slices.Contains(m.OAuthConfig.Scopes.Bot, scope) {
				t.Errorf("%s: expected bot scope %s", c.path, scope)
			}
		}
		if len(m.OAuthConfig.Scopes.Bot) != 8 {
			t.Errorf("%s: expected exactly the 8 scopes the bot uses, got %v", c.path, m.OAuthConfig.Scopes.Bot)
		}
		if !m.Features.BotUser.AlwaysOnline || m.Features.BotUser.DisplayName == "" {
			t.Errorf("%s: expected a bot user", c.path)
		}
		if m.Settings.SocketModeEnabled != c.socket {
			t.Errorf("%s: expected socket_mode_enabled %v", c.path, c.socket)
		}
		url := m.Settings.EventSubscriptions.RequestUrl
		if c.socket && url != "" {
			t.Errorf("%s: expected no request_url with Socket Mode, got %q", c.path, url)
		}
		if !c.socket && !(strings.HasPrefix(url, "https://") && strings.HasSuffix(url, "/slack/events")) {
			t.Errorf("%s: expected the request_url to be the hub's https …/slack/events, got %q", c.path, url)
		}
		// The Stop, Allow and Deny buttons: interactivity on, posted to
		// …/slack/interactivity over HTTP, over the socket otherwise.
		in := m.Settings.Interactivity
		if !in.IsEnabled || c.socket && in.RequestUrl != "" ||
			!c.socket && !(strings.HasPrefix(in.RequestUrl, "https://") && strings.HasSuffix(in.RequestUrl, "/slack/interactivity")) {
			t.Errorf("%s: expected interactivity on, at …/slack/interactivity over HTTP, got %+v", c.path, in)
		}
	}
}
