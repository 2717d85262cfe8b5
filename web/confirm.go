package web

import (
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// confirmation is a page that asks before an action that cannot be undone: a plain
// form, so it works without JavaScript, and a link back that changes nothing.
type confirmation struct {
	Question, Consequence string
	Action, Yes           string
	Back, No              string
}

func (a *app) confirmDeleteWebhook(c *fiber.Ctx) error {
	list, err := a.core.ListWebhooks(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	i := slices.IndexFunc(list, func(w *core.Webhook) bool { return w.ID == c.Params("id") })
	if i < 0 {
		return a.refuse(c, fiber.StatusNotFound, "This account has no such endpoint.")
	}
	w := list[i]
	return a.render(c, fiber.StatusOK, "confirm", page{Title: "Delete the endpoint", Data: confirmation{
		Question:    "Delete the endpoint " + w.URL + "?",
		Consequence: "It gets no more events, and deliveries still waiting for it are dropped. Its delivery log goes with it.",
		Action:      "/app/webhooks/" + w.ID + "/delete", Yes: "Delete it", Back: "/app/webhooks", No: "Keep it"}})
}

func (a *app) confirmRemoveMember(c *fiber.Ctx) error {
	list, err := a.core.ListMembers(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	i := slices.IndexFunc(list, func(m *core.Membership) bool { return m.Member.ID == c.Params("id") })
	if i < 0 {
		return a.refuse(c, fiber.StatusNotFound, "This account has no such member.")
	}
	m := list[i]
	name := m.Member.Name
	if name == "" {
		name = m.Member.ID
	}
	return a.render(c, fiber.StatusOK, "confirm", page{Title: "Remove " + name, Data: confirmation{
		Question:    "Remove " + name + " from this account?",
		Consequence: "Their sessions in it end at once, and they can no longer see or drive its workspaces. The workspaces they started stay. To let them back, invite them again.",
		Action:      "/app/members/" + m.Member.ID + "/remove", Yes: "Remove them", Back: "/app/members", No: "Keep them"}})
}
