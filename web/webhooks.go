package web

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The webhooks page, for owners: create (the secret shown once), list, delete.

type webhooksData struct {
	Webhooks []*core.Webhook
	// Secret is the signing secret of the endpoint just made, shown once.
	Secret    string
	SecretFor string
}

func (a *app) webhooksPage(c *fiber.Ctx) error {
	return a.showWebhooks(c, fiber.StatusOK, webhooksData{}, "")
}

func (a *app) showWebhooks(c *fiber.Ctx, status int, d webhooksData, notice string) error {
	list, err := a.core.ListWebhooks(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	d.Webhooks = list
	return a.render(c, status, "webhooks", page{Title: "Webhooks", Notice: notice, Data: d})
}

func (a *app) createWebhook(c *fiber.Ctx) error {
	w, secret, err := a.core.CreateWebhook(c.UserContext(), sessionOf(c), c.FormValue("url"), c.FormValue("description"))
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code != core.CodeOwnerRequired {
		// The URL or description refused, the limit reached: said on the page.
		return a.showWebhooks(c, fiber.StatusBadRequest, webhooksData{}, ce.Detail)
	}
	if err != nil {
		return a.fail(c, err)
	}
	return a.showWebhooks(c, fiber.StatusCreated, webhooksData{Secret: secret, SecretFor: w.URL}, "")
}

func (a *app) deleteWebhook(c *fiber.Ctx) error {
	if err := a.core.DeleteWebhook(c.UserContext(), sessionOf(c), c.Params("id")); err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/webhooks", fiber.StatusSeeOther)
}

type webhookLogData struct {
	WebhookID string
	Log       *core.WebhookLogView
}

// webhookLog is an endpoint's deliveries, newest first, each with its attempts.
func (a *app) webhookLog(c *fiber.Ctx) error {
	q, err := core.ParseDeliveryQuery(c.Query("before"), c.Query("limit"))
	if err != nil {
		return a.fail(c, err)
	}
	log, err := a.core.WebhookLog(c.UserContext(), sessionOf(c), c.Params("id"), q)
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, fiber.StatusOK, "webhook-log", page{Title: "Deliveries to " + log.Webhook.URL,
		Data: webhookLogData{WebhookID: c.Params("id"), Log: log}})
}

func (a *app) redeliver(c *fiber.Ctx) error {
	if err := a.core.Redeliver(c.UserContext(), sessionOf(c), c.Params("id"), c.Params("delivery")); err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/webhooks/"+c.Params("id")+"/deliveries", fiber.StatusSeeOther)
}
