package api

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// The runtime API (/internal/runtime/v1): what `wshub runtime` calls from a remote
// workspace's machine, with the token the hub minted when it started the machine. It
// is not part of the public contract (api.md); docs/runtime.md describes it.

// mountRuntime adds the runtime API's routes.
func mountRuntime(app fiber.Router, s *server) {
	g := app.Group(runtimewire.Prefix, s.runtimeAuth)
	g.Post("/hello", s.runtimeHello)
	g.Post("/heartbeat", s.runtimeHeartbeat)
	g.Get("/checkout", s.runtimeCheckout)
	g.Post("/ready", s.runtimeReady)
	g.Post("/environment", s.runtimeEnvironment)
	g.Post("/scripts/:runId/output", s.runtimeScriptOutput)
	g.Post("/scripts/:runId/end", s.runtimeScriptEnd)
	g.Get("/scripts/:runId/caches/:i", s.runtimeCacheArchive)
	g.Put("/scripts/:runId/caches/:i/parts/:n", s.runtimeCachePart)
	g.Post("/scripts/:runId/caches/:i", s.runtimeCacheSaved)
	g.Post("/setup-failed", s.runtimeSetupFailed)
	g.Post("/next", s.runtimeNext)
	g.Get("/attachments/:assetId", s.runtimeAttachment)
	g.Post("/commits", s.runtimeCommits)
	g.Post("/turns/:turnId", s.runtimeReport)
	g.Post("/turns/:turnId/events", s.runtimeEvents)
	g.Post("/turns/:turnId/stop-wait", s.runtimeStopWait)
	g.Post("/turns/:turnId/approvals", s.runtimeApproval)
	g.Use(func(c *fiber.Ctx) error {
		return writeError(c, s.log, core.Errorf(core.CodeNotFound, "no such runtime API endpoint"))
	})
}

type runtimeTokenKey struct{}

// runtimeAuth takes the bearer token; core checks it on every call, in the call's own
// transaction, so a revoked token stops working at once.
func (s *server) runtimeAuth(c *fiber.Ctx) error {
	scheme, token, ok := strings.Cut(strings.TrimSpace(c.Get(fiber.HeaderAuthorization)), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return writeError(c, s.log, core.Errorf(core.CodeRuntimeTokenInvalid, "send the runtime token as 'Authorization: Bearer wsrt_...'"))
	}
	c.Locals(runtimeTokenKey{}, strings.TrimSpace(token))
	return c.Next()
}

func runtimeCall(c *fiber.Ctx) core.RuntimeCaller {
	return core.RuntimeCaller{Token: c.Locals(runtimeTokenKey{}).(string), Session: c.Get(runtimewire.SessionHeader)}
}

// decodeRuntime reads a JSON body strictly (unknown fields refused); an empty body
// leaves v as it is.
func decodeRuntime(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return core.Errorf(core.CodeInvalidJSON, "the body is not the expected JSON: %v", err)
	}
	return nil
}

// longPoll reads a long poll's body: {"waitSeconds": 0..MaxWaitSeconds}.
func longPoll(c *fiber.Ctx) (time.Duration, error) {
	var in runtimewire.Next
	if err := decodeRuntime(c, &in); err != nil {
		return 0, err
	}
	if in.WaitSeconds < 0 || in.WaitSeconds > runtimewire.MaxWaitSeconds {
		return 0, core.Errorf(core.CodeInvalidRequest, "waitSeconds must be 0 to %d", runtimewire.MaxWaitSeconds)
	}
	return time.Duration(in.WaitSeconds) * time.Second, nil
}

func (s *server) runtimeHello(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	in, err := s.svc.RuntimeAPI.Hello(c.UserContext(), rc)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.Hello{WorkspaceID: in.WorkspaceID, State: string(in.State), Agent: in.Agent, Model: in.Model,
		RuntimeMode: in.RuntimeMode, Branch: in.Branch, Network: in.Network, TurnTimeoutSeconds: int64(in.TurnTimeout / time.Second),
		VCPUCount: in.Size.VCPUCount, MemoryMiB: in.Size.MemoryMiB})
}

func (s *server) runtimeHeartbeat(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	state, err := s.svc.RuntimeAPI.Heartbeat(c.UserContext(), rc)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.Heartbeat{State: string(state)})
}

// runtimeCheckout streams the branch's bundle from a temporary file, unlinked once
// open: a repository is too large to hold in memory.
func (s *server) runtimeCheckout(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	f, err := os.CreateTemp("", "wshub-checkout-*")
	if err != nil {
		return writeError(c, s.log, err)
	}
	_ = os.Remove(f.Name())
	head, err := s.svc.RuntimeAPI.Checkout(c.UserContext(), rc, f)
	if err == nil {
		_, err = f.Seek(0, 0)
	}
	if err != nil {
		f.Close()
		return writeError(c, s.log, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return writeError(c, s.log, err)
	}
	c.Set(runtimewire.HeadHeader, head)
	c.Set(fiber.HeaderContentType, "application/x-git-bundle")
	return c.SendStream(f, int(st.Size())) // fasthttp closes f when sent
}

func (s *server) runtimeReady(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	if err := s.svc.RuntimeAPI.Ready(c.UserContext(), rc); err != nil {
		return writeError(c, s.log, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *server) runtimeNext(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	wait, err := longPoll(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	t, err := s.svc.RuntimeAPI.NextTurn(c.UserContext(), rc, wait)
	if err != nil {
		return writeError(c, s.log, err)
	}
	if t == nil {
		return c.SendStatus(fiber.StatusNoContent)
	}
	out := runtimewire.Turn{TurnID: t.TurnID, MessageID: t.MessageID, Seq: t.Seq, Prompt: t.Prompt, SessionID: t.SessionID, CoAuthor: t.CoAuthor,
		Attachments: []runtimewire.Attachment{}, Env: t.Env}
	for _, a := range t.Attachments {
		out.Attachments = append(out.Attachments, runtimewire.Attachment{ID: a.ID, Name: a.Name, SizeBytes: a.Size})
	}
	return c.JSON(out)
}

func (s *server) runtimeAttachment(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	data, err := s.svc.RuntimeAPI.Attachment(c.UserContext(), rc, c.Params("assetId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	return c.Send(data)
}

func (s *server) runtimeCommits(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	head, err := s.svc.RuntimeAPI.UploadCommits(c.UserContext(), rc, bytes.NewReader(c.Body()))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.Commits{Head: head})
}

func (s *server) runtimeReport(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	var in runtimewire.Report
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	rep := core.RuntimeReport{Outcome: core.Outcome(in.Outcome), Reply: in.Reply, SessionID: in.SessionID,
		FailureCode: in.FailureCode, FailureMessage: in.FailureMessage, LeftOut: in.LeftOut, CommitFailed: in.CommitFailed}
	if in.Commit != nil {
		rep.Committed, rep.Head = true, in.Commit.Head
		rep.Files, rep.Insertions, rep.Deletions = in.Commit.Files, in.Commit.Insertions, in.Commit.Deletions
	}
	recorded, err := s.svc.RuntimeAPI.ReportTurn(c.UserContext(), rc, c.Params("turnId"), rep)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.Recorded{Recorded: recorded})
}

func (s *server) runtimeEvents(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	var in runtimewire.Events
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	events := make([]core.TurnEvent, len(in.Events))
	for i, e := range in.Events {
		events[i] = core.TurnEvent{Type: core.TurnEventType(e.Type), Tool: e.Tool, Summary: e.Summary, Delta: e.Delta}
	}
	if err := s.svc.RuntimeAPI.TurnEvents(c.UserContext(), rc, c.Params("turnId"), in.First, events); err != nil {
		return writeError(c, s.log, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *server) runtimeStopWait(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	wait, err := longPoll(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	stop, err := s.svc.RuntimeAPI.WaitStop(c.UserContext(), rc, c.Params("turnId"), wait)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.Stop{Stop: stop})
}

func (s *server) runtimeApproval(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	var in runtimewire.Approval
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	if in.WaitSeconds < 0 || in.WaitSeconds > runtimewire.MaxWaitSeconds {
		return writeError(c, s.log, core.Errorf(core.CodeInvalidRequest, "waitSeconds must be 0 to %d", runtimewire.MaxWaitSeconds))
	}
	got, err := s.svc.RuntimeAPI.Approve(c.UserContext(), rc, c.Params("turnId"),
		core.ApprovalAsk{Key: in.Key, Tool: in.Tool, Summary: in.Summary, Input: in.Input}, time.Duration(in.WaitSeconds)*time.Second)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.ApprovalAnswer{ApprovalID: got.Approval.ID, Status: string(got.Approval.Status),
		Allow: got.Answer.Allow, Reason: got.Answer.Reason, Input: got.Answer.Input, InputSHA256: got.Answer.InputSHA256})
}

func (s *server) runtimeSetupFailed(c *fiber.Ctx) error {
	rc := runtimeCall(c)
	var in runtimewire.SetupFailed
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	if err := s.svc.RuntimeAPI.SetupFailed(c.UserContext(), rc, in.Detail); err != nil {
		return writeError(c, s.log, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *server) runtimeEnvironment(c *fiber.Ctx) error {
	sc, err := s.svc.RuntimeAPI.Environment(c.UserContext(), runtimeCall(c))
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := runtimewire.Script{RunID: sc.RunID, Name: sc.Name, Script: sc.Script, Env: sc.Env,
		TimeoutSeconds: int64(sc.Timeout / time.Second), KeepOut: sc.KeepOut, CacheMaxBytes: sc.CacheMaxBytes}
	for _, k := range sc.Caches {
		out.Caches = append(out.Caches, runtimewire.ScriptCache{Paths: k.Paths, Restore: k.Restore, Save: k.Save, Name: k.Name, Scope: k.Scope, Key: k.Key})
	}
	return c.JSON(out)
}

// The wire's part size is core's (runtimewire imports nothing of the module): these
// compile only while the two are equal.
var (
	_ [runtimewire.CachePartBytes - core.CachePartBytes]struct{}
	_ [core.CachePartBytes - runtimewire.CachePartBytes]struct{}
)

// cacheIndex reads a cache's position (and a part's) from the path.
func cacheIndex(c *fiber.Ctx, name string) (int, error) {
	n, err := strconv.Atoi(c.Params(name))
	if err != nil || n < 0 {
		return 0, core.Errorf(core.CodeInvalidRequest, "%s must be a number from 0", name)
	}
	return n, nil
}

func (s *server) runtimeCacheArchive(c *fiber.Ctx) error {
	i, err := cacheIndex(c, "i")
	if err != nil {
		return writeError(c, s.log, err)
	}
	r, size, err := s.svc.RuntimeAPI.CacheArchive(c.UserContext(), runtimeCall(c), c.Params("runId"), i)
	if err != nil {
		return writeError(c, s.log, err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	return c.SendStream(r, int(size)) // fasthttp closes r when sent
}

func (s *server) runtimeCachePart(c *fiber.Ctx) error {
	i, err := cacheIndex(c, "i")
	if err == nil {
		var n int
		if n, err = cacheIndex(c, "n"); err == nil {
			err = s.svc.RuntimeAPI.CachePart(c.UserContext(), runtimeCall(c), c.Params("runId"), i, n, c.Body())
		}
	}
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *server) runtimeCacheSaved(c *fiber.Ctx) error {
	i, err := cacheIndex(c, "i")
	if err != nil {
		return writeError(c, s.log, err)
	}
	var in runtimewire.CacheSaved
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	saved, err := s.svc.RuntimeAPI.CacheSaved(c.UserContext(), runtimeCall(c), c.Params("runId"), i,
		core.RuntimeCacheSaved{Parts: in.Parts, Bytes: in.Bytes, Files: in.Files})
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(runtimewire.CacheRecorded{Saved: saved})
}

func (s *server) runtimeScriptOutput(c *fiber.Ctx) error {
	var in runtimewire.ScriptOutput
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	if err := s.svc.RuntimeAPI.ScriptOutput(c.UserContext(), runtimeCall(c), c.Params("runId"), in.First, in.Lines); err != nil {
		return writeError(c, s.log, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *server) runtimeScriptEnd(c *fiber.Ctx) error {
	var in runtimewire.ScriptEnd
	if err := decodeRuntime(c, &in); err != nil {
		return writeError(c, s.log, err)
	}
	end := core.RuntimeScriptEnd{Outcome: core.Outcome(in.Outcome), ExitCode: in.ExitCode, Limit: in.Limit, Tail: in.Tail, Lines: in.Lines}
	if err := s.svc.RuntimeAPI.ScriptEnded(c.UserContext(), runtimeCall(c), c.Params("runId"), end); err != nil {
		return writeError(c, s.log, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
