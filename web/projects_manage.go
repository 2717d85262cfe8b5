package web

import (
	"errors"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// Owners add, fix and remove the account's projects: core's project use cases on the
// session's account. A credential typed in a form is never written back into a page,
// not even when the form is refused: a page is cached, printed, and read over
// shoulders.

// projectsData is the projects page: the list, and the add form filled again after a
// refusal (its credential never).
type projectsData struct {
	Projects   []*core.ProjectOverview
	Repository string
	Name       string
}

func (a *app) projectsPage(c *fiber.Ctx) error {
	added, fixed, removed := c.Query("added"), c.Query("fixed"), c.Query("removed")
	return a.showProjects(c, fiber.StatusOK, projectsData{}, func(d projectsData) string {
		i := slices.IndexFunc(d.Projects, func(o *core.ProjectOverview) bool { return o.Project.ID == added || o.Project.ID == fixed })
		switch {
		case i >= 0 && d.Projects[i].Mirroring:
			return "Saved " + projectName(d.Projects[i].Project) + ". The hub is mirroring its repository now: reload this page to see how it went."
		case i >= 0:
			return "Saved " + projectName(d.Projects[i].Project) + "."
		case removed != "" && strings.HasPrefix(removed, core.PrefixProject) && !slices.ContainsFunc(d.Projects,
			func(o *core.ProjectOverview) bool { return o.Project.ID == removed }):
			return "Removed the project: it takes no new workspaces; the workspaces that had it keep their history."
		}
		return ""
	})
}

// showProjects draws the projects page; notice says what to say at its top, given
// what the page holds.
func (a *app) showProjects(c *fiber.Ctx, status int, d projectsData, notice func(projectsData) string) error {
	list, err := a.projects.Overview(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	d.Projects = list
	return a.render(c, status, "projects", page{Title: "Projects", Notice: notice(d), Data: d})
}

func (a *app) addProject(c *fiber.Ctx) error {
	in := core.AppProjectInput{Repository: c.FormValue("repository"), Name: c.FormValue("name"), Credential: c.FormValue("credential")}
	p, err := a.projects.Add(c.UserContext(), sessionOf(c), in)
	if why, status, ok := refusedInWords(err); ok {
		return a.showProjects(c, status, projectsData{Repository: in.Repository, Name: in.Name}, func(projectsData) string {
			return why + ". Nothing was added; enter the credential again."
		})
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/projects?added="+p.ID, fiber.StatusSeeOther)
}

// refusedInWords is a refusal a form answers on its own page, asking again: what a
// person typed, not who they are (owners only) or what they named (not found).
func refusedInWords(err error) (why string, status int, ok bool) {
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code == core.CodeOwnerRequired || ce.Code == core.CodeNotFound {
		return "", 0, false
	}
	status, known := core.HTTPStatus(ce.Code)
	if !known {
		status = fiber.StatusBadRequest
	}
	return strings.TrimSuffix(ce.Detail, "."), status, true
}

// projectFix is the fix form: the project as it is, or as the refused form had it.
type projectFix struct {
	Project *core.Project
	// Modes are the pull request settings offered, Forges the forges.
	Modes, Forges []string
	// Events is the forge events form (project_forge.go).
	Events forgeSettings
}

// fixData is the fix page's contents for p as it is stored.
func (a *app) fixData(c *fiber.Ctx, p *core.Project) (projectFix, error) {
	events, err := a.forgeSettingsOf(c, p)
	return projectFix{p, core.PullRequestModes, core.ForgeKinds, events}, err
}

func (a *app) fixPage(c *fiber.Ctx) error {
	p, err := a.projects.Project(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	d, err := a.fixData(c, p)
	if err != nil {
		return a.fail(c, err)
	}
	notice := ""
	if c.Query("forge") == "saved" {
		notice = "Saved the forge events."
		if d.Events.Hook == nil {
			notice = "Forge events are off: the forge's deliveries for this repository are ignored."
		}
	}
	return a.render(c, fiber.StatusOK, "project-fix", page{Title: "Fix " + projectName(p), Notice: notice, Data: d})
}

func (a *app) fixProject(c *fiber.Ctx) error {
	in := core.AppProjectChange{ProjectID: c.Params("id"), Name: c.FormValue("name"), DefaultBranch: c.FormValue("default_branch"),
		Push: c.FormValue("push") != "", PullRequests: c.FormValue("pull_requests"), Forge: c.FormValue("forge"),
		Credential: c.FormValue("credential")}
	p, err := a.projects.Change(c.UserContext(), sessionOf(c), in)
	if why, status, ok := refusedInWords(err); ok {
		p, err := a.projects.Project(c.UserContext(), sessionOf(c), in.ProjectID)
		if err != nil {
			return a.fail(c, err)
		}
		d, err := a.fixData(c, p)
		if err != nil {
			return a.fail(c, err)
		}
		p.DisplayName, p.DefaultBranch, p.Push, p.PullRequests, p.Forge = in.Name, in.DefaultBranch, in.Push, in.PullRequests, in.Forge
		return a.render(c, status, "project-fix", page{Title: "Fix " + projectName(p), Notice: why + ". Nothing was saved.", Data: d})
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/projects?fixed="+p.ID, fiber.StatusSeeOther)
}

func (a *app) confirmRemoveProject(c *fiber.Ctx) error {
	p, err := a.projects.Project(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	name := projectName(p)
	return a.render(c, fiber.StatusOK, "confirm", page{Title: "Remove " + name, Data: confirmation{
		Question: "Remove the project " + name + " (" + core.DisplayRepository(p.Repository) + ")?",
		Consequence: "It leaves this list and takes no new workspaces, and the hub deletes its mirror and saved caches; " +
			"the repository itself is not touched. Workspaces that had it keep their history. While any of them is live, the project stays: archive them first.",
		Action: "/app/projects/" + p.ID + "/remove", Yes: "Remove it", Back: "/app/projects", No: "Keep it"}})
}

func (a *app) removeProject(c *fiber.Ctx) error {
	out, err := a.projects.Remove(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/projects?removed="+out.Project.ID, fiber.StatusSeeOther)
}
