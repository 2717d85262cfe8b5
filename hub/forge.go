package hub

import (
	"github.com/gofiber/fiber/v2"

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
	return forgebot.New(h.Service.Forge, h.Service.Chat, h.Log, h.Metrics.ObserveForgeUnknownRepository)
}

// forgeFront is POST /forge/<kind>/events for every forge kind, bodies bounded before
// they are read. Like the chat platforms' endpoints it answers the forges itself; what
// fails before its handlers is answered by the API, which owns every other path.
func (h *Hub) forgeFront() httpfront.Front {
	bot := h.forgeBot()
	return httpfront.Front{BodyLimits: map[string]int{"/forge/": forgebot.MaxBodyBytes}, Mount: func(r fiber.Router) {
		for _, kind := range core.ForgeKinds {
			r.Post("/forge/"+kind+"/events", bot.EventsHandler(kind))
		}
	}}
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
