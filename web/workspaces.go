package web

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The workspace pages, for every member: the account's workspaces, a start form, and
// one workspace's conversation with what its agent is doing and asking. Every action
// is a plain form (the pages work without JavaScript), sent with a key made when the
// form was drawn, so a form sent twice acts once.

type workspacesData struct {
	List   *core.WorkspaceList
	Filter core.WorkspaceFilter
	States []string
}

func (a *app) workspacesPage(c *fiber.Ctx) error {
	f := core.WorkspaceFilter{Mine: c.Query("mine") == "1", State: c.Query("state"), Origin: c.Query("origin"),
		Attention: c.Query("attention") == "1", Before: c.Query("before")}
	list, err := a.workspaces.List(c.UserContext(), sessionOf(c), f)
	if err != nil {
		return a.fail(c, err)
	}
	states := []string{"queued", "provisioning", "setup", "ready", "pausing", "paused", "resuming", "archiving",
		"archived", "deleting", "failed"}
	return a.render(c, fiber.StatusOK, "workspaces", page{Title: "Workspaces",
		Data: workspacesData{List: list, Filter: f, States: states}})
}

type startData struct {
	Form *core.StartForm
	// Key makes the form start one workspace however often it is sent.
	Key string
	// The values sent, shown again when the start was refused.
	Prompt, Project, Agent, Model, Mode, BaseRef, Branch string
}

func (a *app) newWorkspacePage(c *fiber.Ctx) error {
	return a.showStart(c, fiber.StatusOK, startData{Mode: core.DefaultRuntimeMode}, "")
}

func (a *app) showStart(c *fiber.Ctx, status int, d startData, notice string) error {
	form, err := a.workspaces.StartForm(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	d.Form, d.Key = form, formKey()
	if d.Agent == "" {
		d.Agent, d.Model = form.DefaultAgent, form.DefaultModel
	}
	return a.render(c, status, "workspace-new", page{Title: "Start a workspace", Notice: notice, Data: d})
}

func (a *app) startWorkspace(c *fiber.Ctx) error {
	d := startData{Prompt: c.FormValue("prompt"), Project: c.FormValue("project"), Agent: c.FormValue("agent"),
		Model: c.FormValue("model"), Mode: c.FormValue("runtimeMode"), BaseRef: c.FormValue("baseRef"), Branch: c.FormValue("branch")}
	key := c.FormValue("key")
	in := core.CreateWorkspaceInput{Prompt: given(d.Prompt), ProjectID: given(d.Project), Agent: given(d.Agent),
		Model: given(d.Model), RuntimeMode: given(d.Mode), BaseRef: given(d.BaseRef), Branch: given(d.Branch), HeaderKey: given(key)}
	ws, err := a.workspaces.Start(c.UserContext(), sessionOf(c), in)
	if refused, ok := refusal(err); ok {
		return a.showStart(c, statusFor(refused), d, refused.Detail)
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/workspaces/"+ws.ID, fiber.StatusSeeOther)
}

type workspaceData struct {
	View *core.WorkspaceView
	Key  string // the send form's
}

func (a *app) workspacePage(c *fiber.Ctx) error {
	v, err := a.workspaces.Workspace(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, fiber.StatusOK, "workspace", page{Title: v.Workspace.Name(),
		Data: workspaceData{View: v, Key: formKey()}})
}

// back returns to the workspace's page, at anchor.
func back(c *fiber.Ctx, anchor string) error {
	return c.Redirect("/app/workspaces/"+c.Params("id")+anchor, fiber.StatusSeeOther)
}

func (a *app) sendMessage(c *fiber.Ctx) error {
	var files []string
	for _, v := range c.Context().PostArgs().PeekMulti("attachments") {
		files = append(files, string(v))
	}
	if _, err := a.workspaces.Send(c.UserContext(), sessionOf(c), c.Params("id"), c.FormValue("text"), files, c.FormValue("key")); err != nil {
		return a.fail(c, err)
	}
	return back(c, "#send")
}

func (a *app) decideApproval(c *fiber.Ctx) error {
	_, err := a.workspaces.Decide(c.UserContext(), sessionOf(c), c.Params("id"), c.Params("approval"), c.FormValue("decision"))
	if err != nil {
		return a.fail(c, err)
	}
	return back(c, "#steps")
}

func (a *app) stopTurn(c *fiber.Ctx) error {
	err := a.workspaces.Stop(c.UserContext(), sessionOf(c), c.Params("id"), c.Params("turn"))
	if err != nil && core.ErrorCode(err) != core.CodeTurnNotRunning { // it ended meanwhile: nothing to stop
		return a.fail(c, err)
	}
	return back(c, "")
}

// openPullRequest opens the branch's pull request (or asks for it at the next push);
// the forge's refusal is shown in its words, as every refusal is.
func (a *app) openPullRequest(c *fiber.Ctx) error {
	if _, err := a.workspaces.OpenPullRequest(c.UserContext(), sessionOf(c), c.Params("id")); err != nil {
		return a.fail(c, err)
	}
	return back(c, "#work")
}

// moves are what the starter or an owner may do to a workspace, each confirmed on a
// page of its own first (a page, so it works without JavaScript).
var moves = map[string]struct{ Question, Consequence, Yes, No string }{
	"archive":   {"Archive workspace", "Its machine stops; its branch and conversation stay, and it can be unarchived.", "Archive it", "Keep it running"},
	"unarchive": {"Unarchive workspace", "Its machine starts again from its branch.", "Unarchive it", "Leave it archived"},
	"delete":    {"Delete workspace", "Its machine and conversation go; what was pushed stays in the repository.", "Delete it", "Keep it"},
}

type confirmData struct {
	Workspace                              *core.Workspace
	Action, Question, Consequence, Yes, No string
}

// confirmMove asks before an archive, unarchive or delete.
func (a *app) confirmMove(c *fiber.Ctx) error {
	m, ok := moves[c.Params("action")]
	if !ok {
		return c.SendStatus(fiber.StatusNotFound)
	}
	v, err := a.workspaces.Workspace(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, fiber.StatusOK, "workspace-confirm", page{Title: m.Question + " " + v.Workspace.Name(), Data: confirmData{
		Workspace: v.Workspace, Action: c.Params("action"), Question: m.Question, Consequence: m.Consequence, Yes: m.Yes, No: m.No}})
}

// move archives, unarchives or deletes; a deleted workspace's page is gone, so a
// delete returns to the list.
func (a *app) move(c *fiber.Ctx) error {
	ctx, sess, id := c.UserContext(), sessionOf(c), c.Params("id")
	var err error
	switch c.Params("action") {
	case "archive":
		_, err = a.workspaces.Archive(ctx, sess, id)
	case "unarchive":
		_, err = a.workspaces.Unarchive(ctx, sess, id)
	case "delete":
		_, err = a.workspaces.Delete(ctx, sess, id)
	}
	if err != nil {
		return a.fail(c, err)
	}
	if c.Params("action") == "delete" {
		return c.Redirect("/app/workspaces", fiber.StatusSeeOther)
	}
	return back(c, "")
}

// askShown is an ask as the page shows it: exactly what would run, with what cannot
// be seen made visible (core.ViewAsk, as chat shows it).
type askShown struct {
	ID, Head, Body, Hash string
	Whole                bool
}

func askOf(e *core.TurnEvent) askShown {
	v := core.ViewAsk(e.Tool, e.Summary, e.Input)
	return askShown{ID: e.ApprovalID, Head: v.Head, Body: strings.Join(core.VisibleRunes(strings.TrimRight(v.Body, "\n")), ""),
		Hash: e.InputSHA256, Whole: v.Whole}
}

// pageQuery is the list's query for the page after next, keeping the filter.
func pageQuery(f core.WorkspaceFilter, next string) string {
	q := url.Values{"before": {next}}
	if f.Mine {
		q.Set("mine", "1")
	}
	if f.Attention {
		q.Set("attention", "1")
	}
	if f.State != "" {
		q.Set("state", f.State)
	}
	if f.Origin != "" {
		q.Set("origin", f.Origin)
	}
	return q.Encode()
}

// given is a form field as an optional value: blank means not given.
func given(v string) *string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return &v
}

// formKey is a fresh idempotency key for a form.
func formKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return "app-" + hex.EncodeToString(b)
}

// refusal is err when core refused the request in words (a 4xx).
func refusal(err error) (*core.Error, bool) {
	var ce *core.Error
	if !errors.As(err, &ce) {
		return nil, false
	}
	return ce, statusFor(ce) < 500
}

func statusFor(ce *core.Error) int {
	if s, ok := core.HTTPStatus(ce.Code); ok {
		return s
	}
	return fiber.StatusBadRequest
}

// threadURL opens a chat thread in the platform's web client: Slack's by team,
// channel and thread timestamp; Discord's by server and thread (a thread is a
// channel there).
func threadURL(t *core.ChatThread) string {
	p := t.Place
	switch p.Platform {
	case core.PlatformSlack:
		return "https://app.slack.com/client/" + url.PathEscape(p.TeamID) + "/" + url.PathEscape(p.ChannelID) +
			"/thread/" + url.PathEscape(p.ChannelID+"-"+p.ThreadID)
	case core.PlatformDiscord:
		return "https://discord.com/channels/" + url.PathEscape(p.TeamID) + "/" + url.PathEscape(p.ThreadID)
	}
	return ""
}
