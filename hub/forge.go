package hub

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	forgebot "github.com/wshub/wshub/bots/forge"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/httpfront"
	"github.com/wshub/wshub/jobs"
)

// The forges' front-end (WSHUB_FORGE_EVENTS): their webhooks in on the hub's app, and
// their events handled and answered through the chat queues, one platform per forge.

// forgeBot is the forges' front-end; it holds no state of its own, so the mount and the
// queues each build one.
func (h *Hub) forgeBot() *forgebot.Bot {
	return forgebot.New(h.Service.Forge, h.Service.Chat, h.Log, forgebot.Counters{
		UnknownRepository: h.Metrics.ObserveForgeUnknownRepository, UnknownInstallation: h.Metrics.ObserveForgeUnknownInstallation})
}

// forgeFront is POST /forge/<kind>/events for every forge kind, bodies bounded before
// they are read. Its errors are a status and its words: a forge shows them in its
// delivery log, and reads nothing else.
func (h *Hub) forgeFront() httpfront.Front {
	bot := h.forgeBot()
	return httpfront.Front{Prefixes: []string{"/forge/"}, BodyLimits: map[string]int{"/forge/": forgebot.MaxBodyBytes},
		HandleError: h.forgeError, Mount: func(r fiber.Router) {
			for _, kind := range core.ForgeKinds {
				r.Post("/forge/"+kind+"/events", bot.EventsHandler(kind))
			}
		}}
}

// forgeError answers an error on the forges' paths with its status in words.
func (h *Hub) forgeError(c *fiber.Ctx, err error) error {
	status := fiber.StatusInternalServerError
	var fe *fiber.Error
	var ce *core.Error
	switch {
	case errors.As(err, &fe):
		status = fe.Code
	case errors.As(err, &ce):
		if s, ok := core.HTTPStatus(ce.Code); ok {
			status = s
		}
	}
	if status >= 500 {
		h.Log.Error("forge events", "path", c.Path(), "err", err)
	}
	return c.Status(status).SendString(utils.StatusMessage(status))
}

// addForges has the chat queues handle and answer the forges' events.
func (h *Hub) addForges(chat *jobs.Chat) {
	if !h.Config.ForgeEvents {
		return
	}
	bot := h.forgeBot()
	for _, kind := range core.ForgeKinds {
		chat.Handlers[kind], chat.Posters[kind] = bot.Handler(kind), bot.Poster(kind)
	}
}
