package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// POST /v1/api/workspaces/{id}/approvals/{approvalId} (an extension of the
// contract): {"decision":"allow"|"deny"} on what a turn's agent asked to do. A
// decision is taken once: a second one, or one after the approval timed out or its
// turn ended, is 409 approval_not_pending.

type approvalJSON struct {
	ApprovalID string      `json:"approvalId"`
	TurnID     string      `json:"turnId"`
	Status     string      `json:"status"`
	DecidedBy  string      `json:"decidedBy"`
	Decider    *authorJSON `json:"decider,omitempty"`
	DecidedAt  *int64      `json:"decidedAt"`
}

// decodeDecision reads a decision body (fuzzed).
func decodeDecision(body []byte) (string, error) {
	fields, err := jsonObject(body, true)
	if err != nil {
		return "", err
	}
	d, err := optString(fields, "decision")
	if err != nil {
		return "", err
	}
	if d == nil {
		return "", core.Errorf(core.CodeInvalidRequest, "decision is required")
	}
	if _, err := core.ParseDecision(*d); err != nil {
		return "", err
	}
	return *d, nil
}

func (s *server) decideApproval(c *fiber.Ctx) error {
	body, err := requestBody(c, core.CodeInvalidJSON)
	if err != nil {
		return writeError(c, s.log, err)
	}
	decision, err := decodeDecision(body)
	if err != nil {
		return writeError(c, s.log, err)
	}
	a, err := s.svc.DecideApproval(c.UserContext(), account(c), param(c, "workspaceId"), param(c, "approvalId"), decision)
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := approvalJSON{ApprovalID: a.ID, TurnID: a.TurnID, Status: string(a.Status), DecidedBy: a.DecidedBy, Decider: toAuthor(a.Decider)}
	if a.DecidedAt != nil {
		ms := a.DecidedAt.UnixMilli()
		out.DecidedAt = &ms
	}
	return c.JSON(out)
}
