package web

import (
	"errors"
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
	// The diff may be long to compute: it stops, git killed, when its reader goes.
	ctx, cancel := untilHangup(c)
	defer cancel()
	d, err := a.workspaces.Diff(ctx, sessionOf(c), c.Params("id"), n)
	var ce *core.Error
	switch {
	case err != nil && ctx.Err() != nil && c.UserContext().Err() == nil:
		return nil // nobody is there to answer
	case errors.As(err, &ce) && ce.Code == core.CodeRateLimited:
		c.Set(fiber.HeaderRetryAfter, "5")
		return a.refuse(c, fiber.StatusTooManyRequests, ce.Detail)
	case err != nil:
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

// byteSize reads like "2.5 MiB", "900 KiB" or "12 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
