package slack_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/bots/slack"
)

// TestEventsHandlerReadsTheRawBody serves the events handler alone, without the api
// package's refusal of encoded bodies in front of it, and posts it a gzip body that
// inflates to 1 GiB: the signature is checked over the bytes as sent, so the body is
// never inflated whether the signature is wrong (401) or right (then it is not JSON:
// 400). Before the handler read c.Request().Body(), c.Body() inflated it first.
func TestEventsHandlerReadsTheRawBody(t *testing.T) {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 1024) // 1,024 gzip members: 1 GiB inflated

	// No core.Service: neither answer tested here gets as far as storing an event.
	b := slack.New(nil, slack.Config{BotToken: "xoxb-test", SigningSecret: signingSecret, APIURL: "http://127.0.0.1:1/"}, nil)
	app := fiber.New(fiber.Config{DisableStartupMessage: true, BodyLimit: 4 << 20})
	app.Post("/slack/events", b.EventsHandler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	goodTS, goodSig := sign(bomb, signingSecret, time.Now())
	for _, tt := range []struct {
		name, ts, sig, want string
		status              int
	}{
		{"bad signature", goodTS, "v0=00", "invalid_signature", 401},
		{"good signature", goodTS, goodSig, "invalid_json", 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/slack/events", bytes.NewReader(bomb))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", "gzip")
			req.Header.Set("X-Slack-Request-Timestamp", tt.ts)
			req.Header.Set("X-Slack-Signature", tt.sig)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("expected an answer, got %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			runtime.ReadMemStats(&after)
			// TotalAlloc only grows: it bounds whatever the heap held at its peak.
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d %s; the process allocated %d KiB while answering", resp.StatusCode, body, grew>>10)
			if resp.StatusCode != tt.status || !bytes.Contains(body, []byte(tt.want)) {
				t.Errorf("expected %d %s, got %d %s", tt.status, tt.want, resp.StatusCode, body)
			}
			if grew > 64<<20 {
				t.Errorf("expected under 64 MiB allocated for a %d-byte gzip body, got %d MiB", len(bomb), grew>>20)
			}
		})
	}
}
