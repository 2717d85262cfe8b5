package slack_test

// BenchmarkMentionToReply times a Slack user's round trip through the hub: a signed
// app_mention POSTed to /slack/events until the agent's reply reaches chat.postMessage.
// Like the tests it needs DATABASE_URL (make bench). The hub, PostgreSQL, the fake
// agent and the fake Slack share this machine's CPUs: the figures are for comparison.

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// BenchmarkMentionToReply: one thread's workspace is started before timing; each op is
// one follow-up mention in that thread, sent when the previous reply has been posted.
// It covers signature check, inbox insert and NOTIFY, handling (session, message),
// the workspace worker's wake-up, one fake-agent turn (a process started per turn),
// recording the turn with its outbox rows, and the reply post. Reported: p50 and p99
// in ms (ns/op is the mean).
func BenchmarkMentionToReply(b *testing.B) {
	f := newFakeSlack(b)
	h := slackHub(b, f, true)
	posted := make(chan post, 16)
	f.mu.Lock()
	f.posted = posted
	f.mu.Unlock()
	const root = "1700002000.000100"
	deliver(b, h, eventBody("EvBench0", mention(root, "", "<@"+botUser+"> write bench")))
	waitReply(b, posted, "wrote bench.txt")
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		text := fmt.Sprintf("n%d", i)
		start := time.Now()
		deliver(b, h, eventBody(fmt.Sprintf("EvBench%d", i+1), mention(fmt.Sprintf("1700002001.%06d", i), root, "<@"+botUser+"> "+text)))
		waitReply(b, posted, "echo: "+text)
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	hubtest.ReportPercentiles(b, samples)
}

// waitReply waits for the post saying text, skipping others (the 👀 reaction is not a post).
func waitReply(b *testing.B, posted <-chan post, text string) {
	b.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case p := <-posted:
			if p.Text == text {
				return
			}
			b.Fatalf("expected the reply %q, got %q", text, p.Text)
		case <-deadline:
			b.Fatalf("expected the reply %q within 30 s", text)
		}
	}
}

// BenchmarkToolEventToStatusEdit times a turn's tool step from the agent writing it
// (on its event descriptor, stamped with the time) to the chat.update that shows it
// in the thread's status: the event recorder's write and NOTIFY, the status row's
// bump in that transaction, the status worker's claim, the status made from the
// turn's last events, and the edit. Steps come 300 ms apart and the hub's edit
// interval is shortened to 100 ms, so no step waits for the interval: what is timed
// is the path. In production a step may wait up to the 2 s interval on top (plus the
// status poll, 250 ms, when its wake-up came while the interval ran). Reported: p50
// and p99 in ms.
func BenchmarkToolEventToStatusEdit(b *testing.B) {
	f := newFakeSlack(b)
	h := slackHub(b, f, true, hubtest.WithConfig(func(c *hub.Config) { c.ChatStatusEvery = 100 * time.Millisecond }))
	updated := make(chan post, 64)
	f.mu.Lock()
	f.updated = updated
	f.mu.Unlock()
	const root = "1700003000.000100"
	b.ResetTimer()
	// One step more than measured: the turn's end, right after its last step, would
	// take that step's edit into the final "Finished" status, which lists no steps.
	deliver(b, h, eventBody("EvBenchS", mention(root, "", fmt.Sprintf("<@%s> clock %d 0.3", botUser, b.N+2))))
	samples := make([]time.Duration, 0, b.N)
	seen := 1 // the first step goes out with the status's first post, before any edit
	stamp := regexp.MustCompile("`at ([0-9]+) #([0-9]+)`")
	deadline := time.After(time.Duration(b.N)*time.Second + time.Minute)
	for seen <= b.N {
		select {
		case u := <-updated:
			for _, m := range stamp.FindAllStringSubmatch(u.Text, -1) {
				n, _ := strconv.Atoi(m[2])
				at, _ := strconv.ParseInt(m[1], 10, 64)
				if n > seen {
					samples = append(samples, u.At.Sub(time.Unix(0, at)))
					seen = n
				}
			}
		case <-deadline:
			b.Fatalf("expected edits showing %d steps, saw %d", b.N+1, seen)
		}
	}
	b.StopTimer()
	hubtest.ReportPercentiles(b, samples)
}
