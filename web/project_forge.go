package web

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// A project's forge events, for owners, on its fix page: the webhook's address to give
// the forge, the handle, the trigger label, the failed checks to fix, and the secret
// (set or replaced, never shown). The rules are the operator's
// (`wshub admin project update --forge-...`).

// forgeSettings is the fix page's forge events form.
type forgeSettings struct {
	// Hook is the project's forge events (nil: none).
	Hook *core.ForgeHook
	// Endpoint is where the forge sends its webhooks ("" when the project names no
	// forge, which events need).
	Endpoint string
	// MaxFixChecks bounds the number field.
	MaxFixChecks int
}

// forgeSettingsOf reads the form's contents for p.
func (a *app) forgeSettingsOf(c *fiber.Ctx, p *core.Project) (forgeSettings, error) {
	h, err := a.projects.ForgeEvents(c.UserContext(), sessionOf(c), p.ID)
	out := forgeSettings{Hook: h, MaxFixChecks: core.MaxFixChecks}
	if p.Forge != "" {
		out.Endpoint = strings.TrimSuffix(a.redirectBase(), "/") + "/forge/" + p.Forge + "/events"
	}
	return out, err
}

// setForgeEvents saves the forge events form: events on with the fields as given (an
// empty secret keeps the one saved), or off.
func (a *app) setForgeEvents(c *fiber.Ctx) error {
	in := core.ForgeEventsInput{Off: c.FormValue("events") != "on"}
	if !in.Off {
		handle, label := c.FormValue("handle"), c.FormValue("trigger_label")
		in.Handle, in.TriggerLabel = &handle, &label
		if secret := c.FormValue("secret"); strings.TrimSpace(secret) != "" {
			in.Secret = &secret
		}
		n, err := strconv.Atoi(strings.TrimSpace(c.FormValue("fix_checks", "0")))
		if err != nil {
			n = -1 // refused in words by core, as any number out of range
		}
		in.FixChecks = &n
	}
	_, err := a.projects.SetForgeEvents(c.UserContext(), sessionOf(c), c.Params("id"), in)
	if why, status, ok := refusedInWords(err); ok {
		p, err := a.projects.Project(c.UserContext(), sessionOf(c), c.Params("id"))
		if err != nil {
			return a.fail(c, err)
		}
		d, err := a.fixData(c, p)
		if err != nil {
			return a.fail(c, err)
		}
		return a.render(c, status, "project-fix", page{Title: "Fix " + projectName(p),
			Notice: why + ". The forge events were not changed.", Data: d})
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/projects/"+c.Params("id")+"/fix?forge=saved", fiber.StatusSeeOther)
}
