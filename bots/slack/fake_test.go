package slack_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

const (
	botUser       = "UBOT0001"
	team          = "T0TEAM01"
	channel       = "C0CHAN01"
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	botToken      = "xoxb-test-token"
)

// post is a chat.postMessage call the bot made (TS: the ts the fake gave it), or a
// chat.update of one (TS: the message edited) or a chat.postEphemeral (User).
type post struct {
	Channel, ThreadTS, Text string
	TS, Blocks, User        string
	At                      time.Time // when the fake received it
}

// fakeSlack is slack-go's slacktest server with the Web API methods the bot calls
// captured: auth.test answers as the bot, chat.postMessage and reactions.add are
// recorded, and files are served (only to the bot token) from /files/.
type fakeSlack struct {
	*slacktest.Server
	mu        sync.Mutex
	posts     []post
	reactions []string
	files     map[string][]byte
	// failPost, when set, answers a chat.postMessage call instead of recording it.
	failPost func(w http.ResponseWriter, n int) bool
	calls    int
	// posted, when set, receives every recorded post (benchmarks time them).
	posted chan post
	// updates are chat.update calls; ephemerals chat.postEphemeral calls.
	updates, ephemerals []post
	updateTimes         map[string][]time.Time // by the ts edited
	// updated, when set, receives every recorded update (benchmarks time them).
	updated chan post
	// uploads are files shared by files.completeUploadExternal; uploading holds
	// the bytes sent to an upload URL until then, by file id.
	uploads   []upload
	uploading map[string]upload
}

// upload is a file the bot uploaded and shared.
type upload struct {
	ID, Name, Title, Channel, ThreadTS string
	Length                             int
	Data                               []byte
}

func newFakeSlack(t testing.TB) *fakeSlack { return newFakeSlackWith(t) }

// newFakeSlackWith lets a test add handlers (registered first, so they win).
func newFakeSlackWith(t testing.TB, extra ...slacktest.Binder) *fakeSlack {
	f := &fakeSlack{files: map[string][]byte{}, updateTimes: map[string][]time.Time{}, uploading: map[string]upload{}}
	f.Server = slacktest.NewTestServer(append(extra, func(c slacktest.Customize) {
		c.Handle("/auth.test", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `{"ok":true,"user_id":%q,"team_id":%q,"user":"wshub"}`, botUser, team)
		})
		c.Handle("/chat.postMessage", f.postMessage)
		// users.info as Slack answers it (https://api.slack.com/methods/users.info):
		// UHUMAN01 has a display name, anyone else only a full name.
		c.Handle("/users.info", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			id := r.Form.Get("user")
			display := ""
			if id == "UHUMAN01" {
				display = "Ada Lovelace"
			}
			fmt.Fprintf(w, `{"ok":true,"user":{"id":%q,"team_id":%q,"name":"handle","real_name":"Person %s","profile":{"display_name":%q,"real_name":"Person %s"}}}`,
				id, team, id, display, id)
		})
		// chat.update and chat.postEphemeral as Slack answers them
		// (https://api.slack.com/methods/chat.update, …/chat.postEphemeral).
		c.Handle("/chat.update", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			p := post{Channel: r.Form.Get("channel"), TS: r.Form.Get("ts"), Text: r.Form.Get("text"), Blocks: r.Form.Get("blocks"), At: time.Now()}
			f.mu.Lock()
			f.updates = append(f.updates, p)
			f.updateTimes[p.TS] = append(f.updateTimes[p.TS], p.At)
			updated := f.updated
			f.mu.Unlock()
			if updated != nil {
				updated <- p
			}
			fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q,"text":%q}`, p.Channel, p.TS, p.Text)
		})
		c.Handle("/chat.postEphemeral", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			f.mu.Lock()
			f.ephemerals = append(f.ephemerals, post{Channel: r.Form.Get("channel"), ThreadTS: r.Form.Get("thread_ts"),
				User: r.Form.Get("user"), Text: r.Form.Get("text")})
			f.mu.Unlock()
			fmt.Fprintf(w, `{"ok":true,"message_ts":"%d.000002"}`, time.Now().UnixNano())
		})
		c.Handle("/reactions.add", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			f.mu.Lock()
			f.reactions = append(f.reactions, r.Form.Get("name")+" "+r.Form.Get("channel")+" "+r.Form.Get("timestamp"))
			f.mu.Unlock()
			fmt.Fprint(w, `{"ok":true}`)
		})
		// Slack's upload flow (https://api.slack.com/messaging/files#uploading_files):
		// files.getUploadURLExternal gives a URL and a file id, the bytes are POSTed
		// to the URL, files.completeUploadExternal shares the file in a channel.
		c.Handle("/files.getUploadURLExternal", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			length, _ := strconv.Atoi(r.Form.Get("length"))
			id := fmt.Sprintf("F%d", time.Now().UnixNano())
			f.mu.Lock()
			f.uploading[id] = upload{ID: id, Name: r.Form.Get("filename"), Length: length}
			f.mu.Unlock()
			fmt.Fprintf(w, `{"ok":true,"upload_url":%q,"file_id":%q}`, f.GetAPIURL()+"upload/"+id, id)
		})
		c.Handle("/upload/", func(w http.ResponseWriter, r *http.Request) {
			id := strings.TrimPrefix(r.URL.Path, "/upload/")
			file, _, err := r.FormFile("file")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			data, _ := io.ReadAll(file)
			f.mu.Lock()
			defer f.mu.Unlock()
			u, ok := f.uploading[id]
			if !ok || len(data) != u.Length {
				http.Error(w, "unknown upload or wrong length", http.StatusBadRequest)
				return
			}
			u.Data = data
			f.uploading[id] = u
			fmt.Fprintf(w, "OK - %d", len(data))
		})
		c.Handle("/files.completeUploadExternal", func(w http.ResponseWriter, r *http.Request) {
			_ = r.ParseForm()
			var files []struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			}
			if err := json.Unmarshal([]byte(r.Form.Get("files")), &files); err != nil || len(files) != 1 {
				fmt.Fprint(w, `{"ok":false,"error":"invalid_arguments"}`)
				return
			}
			f.mu.Lock()
			u, ok := f.uploading[files[0].ID]
			if ok && u.Data != nil {
				delete(f.uploading, u.ID)
				u.Title, u.Channel, u.ThreadTS = files[0].Title, r.Form.Get("channel_id"), r.Form.Get("thread_ts")
				f.uploads = append(f.uploads, u)
			}
			f.mu.Unlock()
			if !ok || u.Data == nil {
				fmt.Fprint(w, `{"ok":false,"error":"file_not_found"}`)
				return
			}
			fmt.Fprintf(w, `{"ok":true,"files":[{"id":%q,"title":%q}]}`, u.ID, u.Title)
		})
		c.Handle("/files/", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+botToken {
				http.Error(w, "no", http.StatusForbidden)
				return
			}
			f.mu.Lock()
			data, ok := f.files[strings.TrimPrefix(r.URL.Path, "/files/")]
			f.mu.Unlock()
			if !ok {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(data)
		})
	})...)
	f.Start()
	t.Cleanup(f.Stop)
	return f
}

func (f *fakeSlack) postMessage(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v, _ := url.ParseQuery(string(body))
	f.mu.Lock()
	f.calls++
	n, fail := f.calls, f.failPost
	f.mu.Unlock()
	if fail != nil && fail(w, n) {
		return
	}
	ts := fmt.Sprintf("%d.000001", time.Now().UnixNano())
	p := post{Channel: v.Get("channel"), ThreadTS: v.Get("thread_ts"), Text: v.Get("text"), TS: ts, Blocks: v.Get("blocks"), At: time.Now()}
	f.mu.Lock()
	f.posts = append(f.posts, p)
	posted := f.posted
	f.mu.Unlock()
	if posted != nil {
		posted <- p
	}
	fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q}`, v.Get("channel"), ts)
}

// failNextPosts answers the next n chat.postMessage calls with status.
func (f *fakeSlack) failNextPosts(n, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := n
	f.failPost = func(w http.ResponseWriter, _ int) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if left == 0 {
			return false
		}
		left--
		w.WriteHeader(status)
		return true
	}
}

func (f *fakeSlack) Posts() []post {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]post(nil), f.posts...)
}

// waitPosts waits until cond holds on the posts in thread ts.
func (f *fakeSlack) waitPosts(t *testing.T, ts, what string, cond func([]post) bool) []post {
	t.Helper()
	return eventually.Value(t, 30*time.Second, what+" in thread "+ts, func() ([]post, error) {
		var in []post
		for _, p := range f.Posts() {
			if p.ThreadTS == ts {
				in = append(in, p)
			}
		}
		if !cond(in) {
			return in, fmt.Errorf("got %+v", in)
		}
		return in, nil
	})
}

// waitThreadSettled waits until no reply or notice of thread ts is still to be posted:
// one recorded as posted is never posted again, so the thread's posts are then final.
func waitThreadSettled(t *testing.T, h *hubtest.Hub, ts string) {
	t.Helper()
	eventually.NoError(t, 30*time.Second, "every post of thread "+ts+" settled", func() error {
		var n struct{ Posts, Pending int }
		err := h.PG().DB().Get(&n, `SELECT count(*) AS posts, count(*) FILTER (WHERE status = 'pending') AS pending FROM (
			SELECT status FROM chat_notices WHERE thread_id = $1
			UNION ALL SELECT d.status FROM chat_deliveries d JOIN chat_threads t ON t.id = d.thread_id WHERE t.thread_id = $1) p`, ts)
		if err == nil && (n.Posts == 0 || n.Pending > 0) {
			err = fmt.Errorf("%d posts recorded, %d pending", n.Posts, n.Pending)
		}
		return err
	})
}

// fileURL is where the fake serves a file (on the API host, where slack-go sends the token).
func (f *fakeSlack) fileURL(id string) string {
	return strings.TrimSuffix(f.GetAPIURL(), "/") + "/files/" + id
}

// slackHub runs a hub with the Slack bot pointed at f and its team bound to the
// hub's account (agent_1 on the fake agent).
func slackHub(t testing.TB, f *fakeSlack, bind bool, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)), hubtest.WithConfig(func(c *hub.Config) {
		c.SlackBotToken, c.SlackSigningSecret, c.SlackAPIURL = botToken, signingSecret, f.GetAPIURL()
		// Only turns longer than this get a status message: on a busy machine a quick
		// turn could take 2 s, and these tests look for the reply alone (the status
		// tests set their own).
		c.ChatStatusEvery = time.Minute
	})}, opts...)...)
	if bind {
		bindTeam(t, h)
	}
	return h
}

// bindTeam binds the test team to the hub's account with agent_1 and a model.
func bindTeam(t testing.TB, h *hubtest.Hub) {
	t.Helper()
	if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
		AccountID: h.Account.ID, Agent: "agent_1", Model: "test-model"}); err != nil {
		t.Fatalf("bind: %v", err)
	}
}

// eventBody is an Events API callback as Slack sends it.
func eventBody(eventID string, ev map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"token": "verification-token-unused", "team_id": team, "api_app_id": "A0APP", "type": "event_callback",
		"event_id": eventID, "event_time": time.Now().Unix(), "event": ev,
	})
	return b
}

func mention(ts, threadTS, text string) map[string]any {
	ev := map[string]any{"type": "app_mention", "user": "UHUMAN01", "text": text, "ts": ts, "channel": channel, "event_ts": ts}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

// sign returns Slack's request signature headers for body at t.
func sign(body []byte, secret string, t time.Time) (string, string) {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%s:%s", ts, body)
	return ts, "v0=" + hex.EncodeToString(m.Sum(nil))
}

// deliver posts a signed event to the hub's /slack/events and returns the status.
func deliver(t testing.TB, h *hubtest.Hub, body []byte) (int, string) {
	t.Helper()
	ts, sig := sign(body, signingSecret, time.Now())
	return deliverSigned(t, h, body, ts, sig)
}

func deliverSigned(t testing.TB, h *hubtest.Hub, body []byte, ts, sig string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", h.URL+"/slack/events", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /slack/events: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitMetrics waits until the hub's /metrics has every line in want.
// waitMetrics waits until /metrics holds every wanted line and returns the scrape.
func waitMetrics(t testing.TB, h *hubtest.Hub, want ...string) string {
	t.Helper()
	return eventually.Value(t, 10*time.Second, "/metrics to have every wanted line", func() (string, error) {
		resp, err := http.Get(h.MetricsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, w := range want {
			if !strings.Contains(string(b), w+"\n") {
				var lines []string
				for _, l := range strings.Split(string(b), "\n") {
					if strings.HasPrefix(l, "wshub_chat") {
						lines = append(lines, l)
					}
				}
				return "", fmt.Errorf("no %q in:\n%s", w, strings.Join(lines, "\n"))
			}
		}
		return string(b), nil
	})
}

// Uploads are the files the bot shared, in order.
func (f *fakeSlack) Uploads() []upload {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]upload(nil), f.uploads...)
}
