package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// page is what every template gets: the person (nil before sign-in), the form token,
// and the page's own data.
type page struct {
	Title   string
	Session *core.AppSession
	// Accounts are the person's accounts, for the switcher (shown with two or more).
	Accounts []*core.Membership
	CSRF     string
	// Invited counts the invitations waiting for the person (the header links them).
	Invited int
	Notice  string // a refusal or a result, said at the top
	Data    any
}

var templateFuncs = template.FuncMap{
	"when": func(t *time.Time) template.HTML {
		if t == nil {
			return "never"
		}
		return timeTag(*t)
	},
	"date": timeTag,
	"ms":   func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + " ms" },
	// markdown renders an agent's reply as sanitized HTML (markdown.go).
	"markdown": renderMarkdown,
	"short":    func(sha string) string { return sha[:min(len(sha), 12)] },
	// agent names an agent id for people: "Claude Code (agent_1)".
	"agent": core.AgentLabel,
	// badgeClass names a badge's colour: its words with dashes ("badge-setting-up").
	"badgeClass": func(b core.Badge) string { return "badge badge-" + strings.ReplaceAll(string(b), " ", "-") },
	// repository is a project's repository without the credentials its URL may hold.
	"repository": core.DisplayRepository,
	"bytes":      byteSize,
	"threadURL":  threadURL,
	"list":       func(v ...string) []string { return v },
	"pageQuery":  pageQuery,
	"ask":        askOf,
	"isImage":    isImage,
	"since":      since,
	"duration":   duration,
	// secret is a value shown once, with its field's id and label (the "shown-once"
	// template: the keys' and the webhooks' pages).
	"secret": func(id, label, value string) shownOnce { return shownOnce{ID: id, Label: label, Value: value} },
	// action is a form of one button that posts to path with the session's token (the
	// "action" template), its button's text and accessible name.
	"action": func(path, text, name, csrf string) postAction {
		return postAction{Path: path, Text: text, Name: name, CSRF: csrf}
	},

	// count says a number with its noun: "1 file changed", "2 files changed".
	"count": count,
	"lines": func(s string) int { return strings.Count(s, "\n") + 1 },
}

type shownOnce struct{ ID, Label, Value string }

type postAction struct{ Path, Text, Name, CSRF string }

func (a *app) render(c *fiber.Ctx, status int, name string, p page) error {
	if s, ok := c.Locals(sessionKey{}).(*core.AppSession); ok {
		p.Session, p.CSRF = s, s.CSRF
		if list, err := a.core.Accounts(c.UserContext(), s); err == nil {
			p.Accounts = list // without it the page still serves, with no switcher
		}
		if list, err := a.core.MyInvitations(c.UserContext(), s); err == nil {
			p.Invited = len(list) // likewise, without the link
		}
	}
	// Into a buffer first: a template that fails halfway leaves no half page behind,
	// and the error becomes the app's error page (errors.go).
	var b bytes.Buffer
	if err := a.pages.ExecuteTemplate(&b, name, p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	c.Status(status).Type("html", "utf-8")
	return c.Send(b.Bytes())
}

// refuse shows a page that says what went wrong, in words, with the status.
func (a *app) refuse(c *fiber.Ctx, status int, why string) error {
	return a.render(c, status, "notice", page{Title: "Not done", Notice: why})
}

// fail answers an error: a core refusal in its own words, anything else logged and
// said plainly (explain).
func (a *app) fail(c *fiber.Ctx, err error) error {
	status, title, why := a.explain(c, err)
	return a.render(c, status, "notice", page{Title: title, Notice: why})
}

func (a *app) static(c *fiber.Ctx) error {
	name := "static/" + c.Params("*")
	b, err := fs.ReadFile(staticFS, name)
	if err != nil {
		return c.SendStatus(fiber.StatusNotFound)
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Type(strings.TrimPrefix(path.Ext(name), "."), "utf-8")
	return c.Send(b)
}

func (a *app) signInPage(c *fiber.Ctx) error {
	name := a.opts.OIDC.Name
	if name == "" {
		name = "single sign-on"
	}
	return a.render(c, fiber.StatusOK, "signin", page{Title: "Sign in", Data: struct {
		Provider string
		Offered  bool
		Discord  bool
	}{name, a.oidc != nil, a.opts.Discord.ClientID != ""}})
}

// home is the account's front page: its workspaces.
func (a *app) home(c *fiber.Ctx) error {
	return c.Redirect("/app/workspaces", fiber.StatusSeeOther)
}

type keysData struct {
	Keys []*core.APIKey
	// Projects and Scopes are what the form offers to limit a new key to.
	Projects []*core.Project
	Scopes   []core.KeyScope
	// Created is the key just made, shown once.
	Created     string
	CreatedName string
}

func (a *app) keysPage(c *fiber.Ctx) error {
	return a.showKeys(c, fiber.StatusOK, keysData{}, "")
}

func (a *app) showKeys(c *fiber.Ctx, status int, d keysData, notice string) error {
	keys, err := a.core.ListKeys(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	if d.Projects, err = a.projects.List(c.UserContext(), sessionOf(c)); err != nil {
		return a.fail(c, err)
	}
	d.Keys, d.Scopes = keys, core.KeyScopes
	return a.render(c, status, "keys", page{Title: "API keys", Notice: notice, Data: d})
}

func (a *app) createKey(c *fiber.Ctx) error {
	in, err := keyForm(c)
	var k *core.APIKey
	var secret string
	if err == nil {
		k, secret, err = a.core.CreateKey(c.UserContext(), sessionOf(c), in)
	}
	if code := core.ErrorCode(err); code == core.CodeInvalidRequest || code == core.CodeProjectNotFound {
		var ce *core.Error
		errors.As(err, &ce)
		return a.showKeys(c, fiber.StatusBadRequest, keysData{}, ce.Detail)
	}
	if err != nil {
		return a.fail(c, err)
	}
	return a.showKeys(c, fiber.StatusCreated, keysData{Created: secret, CreatedName: k.Name}, "")
}

// confirmRevokeKey asks before a revoke, on a page of its own (so it works without
// JavaScript): one click on the list would cut off every script using the key.
func (a *app) confirmRevokeKey(c *fiber.Ctx) error {
	keys, err := a.core.ListKeys(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	i := slices.IndexFunc(keys, func(k *core.APIKey) bool { return k.ID == c.Params("id") && k.RevokedAt == nil })
	if i < 0 {
		return a.refuse(c, fiber.StatusNotFound, "This account has no such key, or it is already revoked.")
	}
	return a.render(c, fiber.StatusOK, "key-confirm", page{Title: "Revoke " + keys[i].Name, Data: keys[i]})
}

func (a *app) revokeKey(c *fiber.Ctx) error {
	if err := a.core.RevokeKey(c.UserContext(), sessionOf(c), c.Params("id")); err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/keys", fiber.StatusSeeOther)
}

func (a *app) signOut(c *fiber.Ctx) error {
	if err := a.core.SignOut(c.UserContext(), sessionOf(c)); err != nil {
		return a.fail(c, err)
	}
	a.clearSessionCookie(c)
	return c.Redirect("/app/signin", fiber.StatusSeeOther)
}
