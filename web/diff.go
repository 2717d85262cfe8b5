package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The work: a workspace's branch against its base, as the hub holds it. The list of
// changed files comes first, each linking to its patch on the page that shows it; the
// patches follow, DiffFilesPerPage files a page.

type diffData struct {
	Diff  *core.BranchDiff
	Files []diffRow
	// Tree is the files by directory, when there are more than treePast of them: a
	// list of paths is then hard to read.
	Tree *diffDir
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
	if len(data.Files) > treePast {
		data.Tree = treeOf(data.Files)
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

// treePast is the number of changed files past which the page lists them as a tree.
const treePast = 5

// diffDir is a directory of the file tree: its files, and its directories, each
// named from it. A directory holding only one directory is shown as one ("a/b/").
type diffDir struct {
	Name  string
	Dirs  []*diffDir
	Files []diffFileLeaf
}

// diffFileLeaf is a file of the tree: its row, and its name in its directory.
type diffFileLeaf struct {
	diffRow
	Name string
}

// treeOf groups rows by directory, each in the order of its first file.
func treeOf(rows []diffRow) *diffDir {
	root := &diffDir{}
	dirs := map[string]*diffDir{}
	for _, r := range rows {
		dir := root
		parts := strings.Split(r.Path, "/")
		for i, name := range parts[:len(parts)-1] {
			path := strings.Join(parts[:i+1], "/")
			next := dirs[path]
			if next == nil {
				next = &diffDir{Name: name}
				dirs[path] = next
				dir.Dirs = append(dir.Dirs, next)
			}
			dir = next
		}
		dir.Files = append(dir.Files, diffFileLeaf{diffRow: r, Name: parts[len(parts)-1]})
	}
	for _, d := range root.Dirs {
		d.join()
	}
	return root
}

// join names a chain of directories that hold one directory each as one.
func (d *diffDir) join() {
	for len(d.Files) == 0 && len(d.Dirs) == 1 {
		only := d.Dirs[0]
		d.Name, d.Dirs, d.Files = d.Name+"/"+only.Name, only.Dirs, only.Files
	}
	for _, c := range d.Dirs {
		c.join()
	}
}

// count says n with its noun in the number n needs: count(1, "file", "files").
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
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
