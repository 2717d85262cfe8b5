package slack_test

// BenchmarkMentionToReply times a Slack user's round trip through the hub: a signed
// app_mention POSTed to /slack/events until the agent's reply reaches chat.postMessage.
// Like the tests it needs DATABASE_URL (make bench). The hub, PostgreSQL, the fake
// agent and the fake Slack share this machine's CPUs: the figures are for comparison.

import (
	"fmt"
	"testing"
	"time"

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
