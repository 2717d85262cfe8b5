package web

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The work: a workspace's branch against its base, as the hub holds it. The list of
// changed files comes first, each linking to its patch on the page that shows it; the
// patches follow, DiffFilesPerPage files a page.

type diffData struct {
	Diff  *core.BranchDiff
	Files []diffRow
	// Patches are the page's files, with the anchors the list links to.
	Patches []diffPatch
	// Prev and Next are the neighbouring pages (0: none).
	Prev, Next int
}

type diffRow struct {
	core.DiffFile
	Href string
}

type diffPatch struct {
	core.FilePatch
	ID string
}

func (a *app) diffPage(c *fiber.Ctx) error {
	n := 1
	if p := c.Query("page"); p != "" {
		var err error
		if n, err = strconv.Atoi(p); err != nil {
			return a.refuse(c, fiber.StatusBadRequest, "The page to show is a number, from 1.")
		}
	}
	d, err := a.workspaces.Diff(c.UserContext(), sessionOf(c), c.Params("id"), n)
	if err != nil {
		return a.fail(c, err)
	}
	data := diffData{Diff: d}
	if d.Page > 1 {
		data.Prev = d.Page - 1
	}
	if d.Page < d.Pages {
		data.Next = d.Page + 1
	}
	base := "/app/workspaces/" + d.Workspace.ID + "/diff"
	for i, f := range d.Files {
		href := "#file-" + strconv.Itoa(i+1)
		if p := i/core.DiffFilesPerPage + 1; p != d.Page {
			href = base + "?page=" + strconv.Itoa(p) + href
		}
		data.Files = append(data.Files, diffRow{DiffFile: f, Href: href})
	}
	first := (d.Page - 1) * core.DiffFilesPerPage
	for i, p := range d.Patches {
		data.Patches = append(data.Patches, diffPatch{FilePatch: p, ID: "file-" + strconv.Itoa(first+i+1)})
	}
	title := "Changes in " + d.Workspace.ID
	if d.Pages > 1 {
		title += ", page " + strconv.Itoa(d.Page) + " of " + strconv.Itoa(d.Pages)
	}
	return a.render(c, fiber.StatusOK, "workspace-diff", page{Title: title, Data: data})
}
