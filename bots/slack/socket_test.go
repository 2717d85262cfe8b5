package slack_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/slacktest"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// socketSlack adds Socket Mode to the fake: apps.connections.open hands out a
// websocket on the same server, which says hello, sends the queued envelopes, and
// records the acknowledgements the bot sends back.
type socketSlack struct {
	*fakeSlack
	envelopes chan []byte
	acks      chan string
}

func newSocketSlack(t *testing.T) *socketSlack {
	s := &socketSlack{envelopes: make(chan []byte, 8), acks: make(chan string, 8)}
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	s.fakeSlack = newFakeSlackWith(t, func(c slacktest.Customize) {
		c.Handle("/apps.connections.open", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer xapp-test" {
				http.Error(w, `{"ok":false,"error":"invalid_auth"}`, 200)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "url": "ws://" + r.Host + "/socket"})
		})
		c.Handle("/socket", func(w http.ResponseWriter, r *http.Request) {
			conn, err := upgrader.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer conn.Close()
			_ = conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1})
			go func() {
				for {
					var ack struct {
						EnvelopeID string `json:"envelope_id"`
					}
					if err := conn.ReadJSON(&ack); err != nil {
						return
					}
					s.acks <- ack.EnvelopeID
				}
			}()
			for {
				select {
				case env := <-s.envelopes:
					if err := conn.WriteMessage(websocket.TextMessage, env); err != nil {
						return
					}
				case <-r.Context().Done():
					return
				}
			}
		})
	})
	return s
}

func TestSocketModeEventsStartWorkspaces(t *testing.T) {
	t.Parallel()
	s := newSocketSlack(t)
	agent := hubtest.FakeAgent(t)
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", agent), hubtest.WithConfig(func(c *hub.Config) {
		c.SlackBotToken, c.SlackAppToken, c.SlackAPIURL = botToken, "xapp-test", s.GetAPIURL()
		c.ChatStatusEvery = time.Minute // the reply alone, however busy the machine
	}))
	bindTeam(t, h)
	const root = "1700000600.000100"
	env, _ := json.Marshal(map[string]any{"envelope_id": "env-0001", "type": "events_api", "accepts_response_payload": false,
		"payload": json.RawMessage(eventBody("EvSock1", mention(root, "", "<@"+botUser+"> write socket")))})
	s.envelopes <- env
	select {
	case id := <-s.acks:
		if id != "env-0001" {
			t.Fatalf("expected the envelope acknowledged, got ack for %q", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("expected an acknowledgement of the envelope within 20 s")
	}
	posts := s.waitPosts(t, root, "the reply", func(p []post) bool { return len(p) >= 1 })
	if posts[0].Text != "wrote socket.txt" {
		t.Fatalf("expected %q, got %q", "wrote socket.txt", posts[0].Text)
	}
	if !strings.HasPrefix(posts[0].Channel, "C") {
		t.Fatalf("expected the reply in the channel, got %+v", posts[0])
	}
}

// Over Socket Mode a button press arrives as an interactive envelope: it is
// acknowledged and taken like one posted to /slack/interactivity.
func TestSocketModeButtonPress(t *testing.T) {
	t.Parallel()
	s := newSocketSlack(t)
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)), hubtest.WithConfig(func(c *hub.Config) {
		c.SlackBotToken, c.SlackAppToken, c.SlackAPIURL = botToken, "xapp-test", s.GetAPIURL()
		c.ChatStatusEvery = statusEvery
	}))
	bindTeam(t, h)
	const root = "1700000700.000100"
	send := func(id, typ string, payload []byte) {
		env, _ := json.Marshal(map[string]any{"envelope_id": id, "type": typ, "accepts_response_payload": false,
			"payload": json.RawMessage(payload)})
		s.envelopes <- env
		select {
		case got := <-s.acks:
			if got != id {
				t.Fatalf("expected envelope %s acknowledged, got %q", id, got)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("expected an acknowledgement of %s within 20 s", id)
		}
	}
	send("env-0101", "events_api", eventBody("EvSock2", mention(root, "", "<@"+botUser+"> sleep 30")))
	status := s.waitPosts(t, root, "the status", func(p []post) bool { return len(p) >= 1 })[0]
	send("env-0102", "interactive", blockActions("UHUMAN01", status, root, "wshub_stop", buttonValue(status.Blocks, "wshub_stop")))
	posts := s.waitPosts(t, root, "the interrupted reply", func(p []post) bool { return len(p) >= 2 })
	if !strings.Contains(posts[1].Text, "interrupted") {
		t.Fatalf("expected the turn stopped, got %+v", posts[1])
	}
}
