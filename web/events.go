package web

import (
	"bufio"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/sse"
)

// A workspace's page follows its turns live: its script opens this stream (the same
// events as the API's, for the session) and draws the page again from the server
// when one arrives. The page is whole without it.

// liveEvent is what the page's script reads of an event: that something happened,
// and its seq to resume after.
type liveEvent struct {
	Seq  int64  `json:"seq"`
	Type string `json:"type"`
}

func (a *app) workspaceEvents(c *fiber.Ctx) error {
	// EventSource resumes with Last-Event-ID; the page's first request names its seq.
	after, err := strconv.ParseInt(cmp.Or(strings.TrimSpace(c.Get("Last-Event-ID")), c.Query("after"), "0"), 10, 64)
	if err != nil || after < 0 {
		return a.refuse(c, fiber.StatusBadRequest, "The stream resumes after the seq of an event.")
	}
	sess := sessionOf(c)
	// Pages the stream reads itself (a resume from far behind) are paced by the
	// member's bucket, which their other pages and sessions share.
	var pace core.Pacer
	if a.paces != nil {
		pace = a.paces.Of(sess.Member.ID)
	}
	sub, err := a.workspaces.Events(c.UserContext(), sess, c.Params("id"), after, pace)
	if err != nil {
		return a.fail(c, err)
	}
	// Counted for the member, whose sessions (however many sign-ins) share their
	// places, and for the account, whose keys share its bound with them.
	release, full := sse.AcquireAll(sse.Hold{Places: a.streams, Caller: sess.Member.ID}, sse.Hold{Places: a.opts.AccountStreams, Caller: sess.AccountID})
	if full >= 0 {
		sub.Close()
		c.Set(fiber.HeaderRetryAfter, "5")
		if full == 0 {
			return a.refuse(c, fiber.StatusTooManyRequests, "You have as many live pages open as the hub takes; close one.")
		}
		return a.refuse(c, fiber.StatusTooManyRequests, "This account has as many live pages and event streams open as the hub takes; close one.")
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	id := c.Params("id")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer release()
		sse.Serve(w, sub, sse.Options{Lifetime: a.opts.StreamFor, Closing: a.opts.StreamsClosing, Encode: func(e *core.TurnEvent) []byte {
			body, _ := json.Marshal(liveEvent{Seq: e.Seq, Type: string(e.Type)})
			return body
		}, Failed: func(err error) { a.log.Warn("app event stream", "workspace", id, "err", err) }})
	})
	return nil
}
