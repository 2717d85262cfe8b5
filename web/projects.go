package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The projects pages, for owners: the account's projects (added, fixed and removed in
// projects_manage.go), and each one's secrets (set, replaced, removed; listed by name,
// never shown) beside its environment settings.

// ProjectsPrefix is the project pages' path prefix, which the hub bounds to
// MaxSecretFormBytes.
const ProjectsPrefix = "/app/projects/"

// MaxSecretFormBytes bounds a request body of the project pages: room for a value of
// core.MaxSecretValue bytes each of which arrives as six (a line break, which a
// textarea sends as CRLF, percent-encoded), so that any value past the bound is
// refused in words by core rather than cut off as a form too large.
const MaxSecretFormBytes = 6*core.MaxSecretValue + MaxFormBytes

type secretsData struct {
	Project     *core.Project
	Secrets     []*core.ProjectSecret
	Environment *core.Environment
	// Settings is the text of the environment form: the project's settings as JSON,
	// or what was sent when it was refused.
	Settings string
	// Name and Agent fill the form again after a refusal. The value never does: a page
	// is cached, printed, and read over shoulders.
	Name  string
	Agent bool
}

func (d secretsData) has(name string) bool {
	return slices.ContainsFunc(d.Secrets, func(s *core.ProjectSecret) bool { return s.Name == name })
}

// secretsPage is a project's secrets and environment; ?saved= and ?removed= name the
// secret the last form changed, said at the top when the list bears it out (and only
// a secret's name: a link cannot put words of its own on the page).
func (a *app) secretsPage(c *fiber.Ctx) error {
	saved, removed := c.Query("saved"), c.Query("removed")
	return a.showSecrets(c, fiber.StatusOK, secretsData{}, func(d secretsData) string {
		switch {
		case saved != "" && d.has(saved):
			return "Saved " + saved + ". Its value is sealed and is not shown again; to change it, set it again."
		case core.CheckSecretName(removed) == nil && !d.has(removed):
			return "Removed " + removed + ": setups and turns that start from now on do not get it."
		case c.Query("environment") == "saved" && d.Environment != nil:
			return "Saved the environment: workspaces created from now on are set up with it."
		case c.Query("environment") == "removed" && d.Environment == nil:
			return "Removed the environment settings: workspaces created from now on take the repository's."
		}
		return ""
	})
}

// showSecrets draws the project's page; notice says what to say at its top, given
// what the page holds.
func (a *app) showSecrets(c *fiber.Ctx, status int, d secretsData, notice func(secretsData) string) error {
	p, list, err := a.projects.Secrets(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	d.Project, d.Secrets, d.Environment = p, list, core.ProjectEnvironmentSettings(p)
	if d.Settings == "" && d.Environment != nil {
		var b bytes.Buffer
		if json.Indent(&b, p.Environment, "", "  ") == nil {
			d.Settings = b.String()
		}
	}
	return a.render(c, status, "project-secrets", page{Title: projectName(p), Notice: notice(d), Data: d})
}

func projectName(p *core.Project) string {
	if p.DisplayName != "" {
		return p.DisplayName
	}
	return p.ID
}

func (a *app) setSecret(c *fiber.Ctx) error {
	in := core.ProjectSecretInput{ProjectID: c.Params("id"), Name: c.FormValue("name"),
		// A textarea sends its line breaks as CRLF whatever was typed or pasted; the
		// value a file would hold has LF.
		Value: strings.ReplaceAll(c.FormValue("value"), "\r\n", "\n"), Agent: c.FormValue("agent") != ""}
	sec, err := a.projects.SetSecret(c.UserContext(), sessionOf(c), in)
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code != core.CodeOwnerRequired && ce.Code != core.CodeNotFound {
		// The name or value refused, the cap reached: said on the form, asked again.
		status, ok := core.HTTPStatus(ce.Code)
		if !ok {
			status = fiber.StatusBadRequest
		}
		return a.showSecrets(c, status, secretsData{Name: in.Name, Agent: in.Agent}, func(secretsData) string {
			return ce.Detail + " Nothing was saved; enter the value again."
		})
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect(ProjectsPrefix+sec.ProjectID+"/secrets?saved="+url.QueryEscape(sec.Name), fiber.StatusSeeOther)
}

// confirmRemoveSecret asks before a remove, on a page of its own (so it works without
// JavaScript): a removed value cannot be shown or brought back.
func (a *app) confirmRemoveSecret(c *fiber.Ctx) error {
	p, list, err := a.projects.Secrets(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	i := slices.IndexFunc(list, func(s *core.ProjectSecret) bool { return s.Name == c.Params("name") })
	if i < 0 {
		return a.refuse(c, fiber.StatusNotFound, "This project has no such secret.")
	}
	return a.render(c, fiber.StatusOK, "secret-confirm", page{Title: "Remove " + list[i].Name,
		Data: struct {
			Project *core.Project
			Secret  *core.ProjectSecret
		}{p, list[i]}})
}

func (a *app) removeSecret(c *fiber.Ctx) error {
	id, name := c.Params("id"), c.Params("name")
	if err := a.projects.RemoveSecret(c.UserContext(), sessionOf(c), id, name); err != nil {
		return a.fail(c, err)
	}
	return c.Redirect(ProjectsPrefix+id+"/secrets?removed="+url.QueryEscape(name), fiber.StatusSeeOther)
}

// setEnvironment saves the project's environment settings (JSON of the form of
// .wshub/environment.json); an empty form removes them.
func (a *app) setEnvironment(c *fiber.Ctx) error {
	text := strings.TrimSpace(c.FormValue("environment"))
	var settings []byte
	if text != "" {
		settings = []byte(text)
	}
	err := a.projects.SetEnvironment(c.UserContext(), sessionOf(c), c.Params("id"), settings)
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == core.CodeInvalidRequest {
		return a.showSecrets(c, fiber.StatusBadRequest, secretsData{Settings: text}, func(secretsData) string {
			return ce.Detail + ". Nothing was saved."
		})
	}
	if err != nil {
		return a.fail(c, err)
	}
	done := "saved"
	if settings == nil {
		done = "removed"
	}
	return c.Redirect(ProjectsPrefix+c.Params("id")+"/secrets?environment="+done, fiber.StatusSeeOther)
}
