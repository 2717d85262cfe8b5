package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

func (s *server) createWorkspace(c *fiber.Ctx) error {
	body, err := requestBody(c, core.CodeInvalidJSON)
	if err != nil {
		return writeError(c, s.log, err)
	}
	in, err := decodeCreateWorkspace(body, optionalHeader(c, "Idempotency-Key"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	ws, created, err := s.svc.CreateWorkspace(c.UserContext(), account(c), in)
	if err != nil {
		return writeError(c, s.log, err)
	}
	status := fiber.StatusCreated
	if !created {
		status = fiber.StatusOK // idempotent replay
	}
	return sendWorkspace(c, status, ws)
}

func (s *server) listWorkspaces(c *fiber.Ctx) error {
	list, err := s.svc.ListWorkspaces(c.UserContext(), account(c))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return sendJSON(c, fiber.StatusOK, func(b []byte) []byte {
		return append(appendArray(append(b, `{"workspaces":`...), list, appendWorkspace), '}')
	})
}

func (s *server) getWorkspace(c *fiber.Ctx) error {
	ws, err := s.svc.GetWorkspace(c.UserContext(), account(c), param(c, "workspaceId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return sendWorkspace(c, fiber.StatusOK, ws)
}

func (s *server) sendMessage(c *fiber.Ctx) error {
	body, err := requestBody(c, core.CodeInvalidJSON)
	if err != nil {
		return writeError(c, s.log, err)
	}
	in, err := decodeSendMessage(body, optionalHeader(c, "Idempotency-Key"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	r, err := s.svc.SendMessage(c.UserContext(), account(c), param(c, "workspaceId"), in)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(fiber.Map{"messageId": r.MessageID, "seq": r.Seq, "status": r.Status, "resumeTriggered": r.ResumeTriggered})
}

func (s *server) listMessages(c *fiber.Ctx) error {
	after, limit, err := core.ParseMessageQuery(c.Query("afterSeq"), c.Query("limit"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	page, err := s.svc.ListMessages(c.UserContext(), account(c), param(c, "workspaceId"), after, limit)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return sendJSON(c, fiber.StatusOK, func(b []byte) []byte { return appendMessagePage(b, page) })
}

func (s *server) uploadAttachment(c *fiber.Ctx) error {
	body, err := requestBody(c, core.CodeInvalidAssetBody)
	if err != nil {
		return writeError(c, s.log, err)
	}
	in := core.UploadInput{
		ContentType: c.Get(fiber.HeaderContentType),
		FileName:    optionalHeader(c, "X-Service-File-Name"),
		HeaderKey:   optionalHeader(c, "Idempotency-Key"),
		Body:        body, // used only during this call
	}
	a, err := s.svc.UploadAttachment(c.UserContext(), account(c), param(c, "workspaceId"), in)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"asset": toAsset(a)})
}

func (s *server) listProjects(c *fiber.Ctx) error {
	list, err := s.svc.ListProjects(c.UserContext(), account(c))
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := make([]projectJSON, len(list))
	for i, p := range list {
		out[i] = projectJSON{ProjectID: p.ID, Repository: core.DisplayRepository(p.Repository), DisplayName: p.DisplayName,
			DefaultBranch: p.DefaultBranch, State: p.State}
	}
	return c.JSON(fiber.Map{"projects": out})
}

func (s *server) listAgents(c *fiber.Ctx) error {
	agents := s.svc.ListAgents(c.UserContext(), account(c))
	if agents == nil {
		agents = []string{}
	}
	return c.JSON(fiber.Map{"agents": agents})
}

func (s *server) listProviders(c *fiber.Ctx) error {
	acct := account(c)
	list := s.svc.ListProviders(c.UserContext(), acct)
	out := make([]providerJSON, len(list))
	for i, p := range list {
		sizes := make([]sizeJSON, len(p.Sizes))
		for j, z := range p.Sizes {
			sizes[j] = sizeJSON{SizeID: z.ID, DisplayName: z.DisplayName, VCPUCount: z.VCPUCount, MemoryMiB: z.MemoryMiB}
		}
		out[i] = providerJSON{ProviderID: p.ID, DisplayName: p.DisplayName, Sizes: sizes, BillingSource: p.BillingSource}
	}
	return c.JSON(fiber.Map{"providers": out, "entitled": acct.Entitled})
}

func (s *server) createWebhook(c *fiber.Ctx) error {
	body, err := requestBody(c, core.CodeInvalidJSON)
	if err != nil {
		return writeError(c, s.log, err)
	}
	in, err := decodeCreateWebhook(body)
	if err != nil {
		return writeError(c, s.log, err)
	}
	wh, secret, err := s.svc.CreateWebhook(c.UserContext(), account(c), in)
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"webhook": toWebhook(wh), "secret": secret})
}

func (s *server) listWebhooks(c *fiber.Ctx) error {
	list, err := s.svc.ListWebhooks(c.UserContext(), account(c))
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := make([]webhookJSON, len(list))
	for i, w := range list {
		out[i] = toWebhook(w)
	}
	return c.JSON(fiber.Map{"webhooks": out})
}

func (s *server) deleteWebhook(c *fiber.Ctx) error {
	if err := s.svc.DeleteWebhook(c.UserContext(), account(c), param(c, "webhookId")); err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(fiber.Map{"ok": true})
}

// GET /v1/api/webhooks/{id}/deliveries (an extension): the endpoint's delivery log,
// newest first, paged with ?before= (the previous page's nextBefore) and ?limit=.
func (s *server) listDeliveries(c *fiber.Ctx) error {
	q, err := core.ParseDeliveryQuery(c.Query("before"), c.Query("limit"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	page, err := s.svc.ListDeliveries(c.UserContext(), account(c), param(c, "webhookId"), q)
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := make([]deliveryJSON, len(page.Deliveries))
	for i, d := range page.Deliveries {
		out[i] = toDelivery(d)
	}
	body := fiber.Map{"deliveries": out}
	if page.Next != nil {
		body["nextBefore"] = page.Next.String()
	}
	return c.JSON(body)
}

// POST /v1/api/webhooks/{id}/deliveries/{deliveryId}/redeliver (an extension): one
// more attempt, due now; 202 because the attempt is made by the delivery worker.
func (s *server) redeliver(c *fiber.Ctx) error {
	d, err := s.svc.Redeliver(c.UserContext(), account(c), param(c, "webhookId"), param(c, "deliveryId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"delivery": toDelivery(d)})
}
