package discord_test

// BenchmarkMentionToReply times a Discord member's round trip through the hub: a
// MESSAGE_CREATE on the fake gateway until the agent's reply is POSTed to the thread.
// Like the tests it needs DATABASE_URL (make bench). The hub, PostgreSQL, the fake
// agent and the fake Discord share this machine's CPUs: the figures are for comparison.

import (
	"fmt"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
)

// BenchmarkMentionToReply: one thread's workspace is started before timing; each op is
// one follow-up mention in that thread, sent when the previous reply has been posted.
// It covers the gateway intake (thread lookup, inbox insert and NOTIFY), handling, the
// worker's wake-up, one fake-agent turn, recording the turn with its outbox rows, and
// the reply post. Reported: p50 and p99 in ms (ns/op is the mean).
func BenchmarkMentionToReply(b *testing.B) {
	f := newFakeDiscord(b)
	discordHub(b, f, nil)
	const root = "990000000000000001"
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> write bench", true))
	f.waitPosts(b, root, "the first reply", func(p []post) bool { return len(p) >= 1 })
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		text := fmt.Sprintf("n%d", i)
		start := time.Now()
		f.dispatch("MESSAGE_CREATE", messageCreate(fmt.Sprint(990000000000100000+i), root, "<@"+botID+"> "+text, true))
		f.waitPosts(b, root, "the reply "+text, func(p []post) bool { return len(p) >= i+2 && p[i+1].Content == "echo: "+text })
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	hubtest.ReportPercentiles(b, samples)
}
