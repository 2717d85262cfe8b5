package api

import (
	"bufio"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/sse"
)

// GET /v1/api/workspaces/{id}/events (an extension of the contract): the
// workspace's turn events, as Server-Sent Events when the client accepts
// text/event-stream, else as a JSON page after ?afterSeq= for clients that poll.

type turnEventJSON struct {
	Seq     int64  `json:"seq"`
	TurnID  string `json:"turnId"`
	Type    string `json:"type"`
	Tool    string `json:"tool,omitempty"`
	Summary string `json:"summary,omitempty"`
	Delta   string `json:"delta,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	// ApprovalID on approval_requested and approval_resolved; Status and DecidedBy on
	// approval_resolved.
	ApprovalID string `json:"approvalId,omitempty"`
	Status     string `json:"status,omitempty"`
	DecidedBy  string `json:"decidedBy,omitempty"`
	// Decider names the person who decided (an extension).
	Decider *authorJSON `json:"decider,omitempty"`
	// Input and InputSHA256 on approval_requested: the tool's whole input, as the
	// agent gave it, and the hash an Allow is bound to; Reason on an approval_resolved
	// the hub decided without asking anyone.
	Input       json.RawMessage `json:"input,omitempty"`
	InputSHA256 string          `json:"inputSha256,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	CreatedAt   int64           `json:"createdAt"`
}

func toTurnEvent(e *core.TurnEvent) turnEventJSON {
	return turnEventJSON{Seq: e.Seq, TurnID: e.TurnID, Type: string(e.Type), Tool: e.Tool, Summary: e.Summary,
		Delta: e.Delta, Outcome: string(e.Outcome), ApprovalID: e.ApprovalID, Status: string(e.Status),
		DecidedBy: e.DecidedBy, Decider: toAuthor(e.Decider), Input: e.Input, InputSHA256: e.InputSHA256, Reason: e.Reason, CreatedAt: e.CreatedAt.UnixMilli()}
}

func (s *server) listEvents(c *fiber.Ctx) error {
	after, limit, err := core.ParseMessageQuery(c.Query("afterSeq"), c.Query("limit"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	stream := strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream")
	if stream {
		if id := strings.TrimSpace(c.Get("Last-Event-ID")); id != "" {
			if after, err = strconv.ParseInt(id, 10, 64); err != nil || after < 0 {
				return writeError(c, s.log, core.Errorf(core.CodeInvalidMessageQuery, "Last-Event-ID must be the seq of an event"))
			}
		}
	}
	acct, id := account(c), param(c, "workspaceId")
	if !stream {
		events, err := s.svc.ListTurnEvents(c.UserContext(), acct, id, after, limit)
		if err != nil {
			return writeError(c, s.log, err)
		}
		out := make([]turnEventJSON, len(events))
		for i, e := range events {
			out[i] = toTurnEvent(e)
			after = e.Seq
		}
		return c.JSON(fiber.Map{"events": out, "latestSeq": after})
	}
	// The workspace is checked before answering: an unknown one is a 404, not an empty
	// stream. The events come from the workspace's feed (one reader for all its streams
	// on this replica); pages the stream reads itself are paced by the key's bucket.
	sub, err := s.svc.StreamEvents(c.UserContext(), acct, id, after, s.pages.pacer(acct.KeyID))
	if err != nil {
		return writeError(c, s.log, err)
	}
	release, full := sse.AcquireAll(sse.Hold{Places: s.streams, Caller: acct.KeyID}, sse.Hold{Places: s.accountStreams, Caller: acct.ID})
	if full >= 0 {
		sub.Close()
		c.Set(fiber.HeaderRetryAfter, "5")
		if full == 0 {
			return writeError(c, s.log, core.Errorf(core.CodeTooManyStreams,
				"this key has %d event streams open, as many as the hub takes; close one, or poll with ?afterSeq=", s.streams.Max))
		}
		return writeError(c, s.log, core.Errorf(core.CodeTooManyStreams,
			"this account has %d event streams and live pages open, over all its keys and sessions, as many as the hub takes; close one, or poll with ?afterSeq=", s.accountStreams.Max))
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	// fasthttp runs the writer at once on a goroutine of its own, whatever becomes of
	// the connection: the place is given back when it returns.
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer release()
		sse.Serve(w, sub, sse.Options{Lifetime: s.streamFor, Closing: s.streamsClosing, Encode: func(e *core.TurnEvent) []byte {
			body, _ := json.Marshal(toTurnEvent(e))
			return body
		}, Failed: func(err error) { s.log.Warn("event stream", "workspace", id, "err", err) }})
	})
	return nil
}

// stopTurn asks for a turn to be stopped (an extension): 202, the turn ends
// interrupted as soon as its runtime sees the request.
func (s *server) stopTurn(c *fiber.Ctx) error {
	running, err := s.svc.StopTurn(c.UserContext(), account(c), param(c, "workspaceId"), param(c, "turnId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"turnId": param(c, "turnId"), "running": running})
}

// openPullRequest is the Open pull request action (an extension): 200 with the
// workspace, its pullRequest set when the branch had been pushed (else the next push
// opens it); 409 pull_request_refused in the forge's words.
func (s *server) openPullRequest(c *fiber.Ctx) error {
	ws, err := s.svc.OpenPullRequest(c.UserContext(), account(c), param(c, "workspaceId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return sendWorkspace(c, fiber.StatusOK, ws)
}
