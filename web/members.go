package web

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The members and audit pages, for owners, and the account switcher.

func (a *app) membersPage(c *fiber.Ctx) error { return a.showMembers(c, fiber.StatusOK, "") }

func (a *app) showMembers(c *fiber.Ctx, status int, notice string) error {
	list, err := a.core.ListMembers(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, status, "members", page{Title: "Members", Notice: notice, Data: list})
}

// afterMemberChange shows the members again: a refusal in words on the page, other
// errors as such.
func (a *app) afterMemberChange(c *fiber.Ctx, err error) error {
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == core.CodeInvalidRequest {
		return a.showMembers(c, fiber.StatusBadRequest, ce.Detail)
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/members", fiber.StatusSeeOther)
}

func (a *app) inviteMember(c *fiber.Ctx) error {
	role, err := core.ParseRole(c.FormValue("role"))
	if err == nil {
		_, err = a.core.InviteMember(c.UserContext(), sessionOf(c), c.FormValue("email"), role)
	}
	return a.afterMemberChange(c, err)
}

func (a *app) setRole(c *fiber.Ctx) error {
	role, err := core.ParseRole(c.FormValue("role"))
	if err == nil {
		err = a.core.SetRole(c.UserContext(), sessionOf(c), c.Params("id"), role)
	}
	return a.afterMemberChange(c, err)
}

func (a *app) removeMember(c *fiber.Ctx) error {
	return a.afterMemberChange(c, a.core.RemoveMember(c.UserContext(), sessionOf(c), c.Params("id")))
}

func (a *app) endSessions(c *fiber.Ctx) error {
	_, err := a.core.EndSessions(c.UserContext(), sessionOf(c), c.Params("id"))
	return a.afterMemberChange(c, err)
}

type auditData struct {
	Entries []*core.AuditEntry
	// Older is the before= of the next page (0: none).
	Older int64
}

const auditPage = 50

func (a *app) auditPage(c *fiber.Ctx) error {
	before, err := strconv.ParseInt(c.Query("before", "0"), 10, 64)
	if err != nil || before < 0 {
		return a.refuse(c, fiber.StatusBadRequest, "before must be an entry number.")
	}
	list, err := a.core.AuditLog(c.UserContext(), sessionOf(c), before, auditPage)
	if err != nil {
		return a.fail(c, err)
	}
	d := auditData{Entries: list}
	if len(list) == auditPage {
		d.Older = list[len(list)-1].ID
	}
	return a.render(c, fiber.StatusOK, "audit", page{Title: "Audit log", Data: d})
}

func (a *app) switchAccount(c *fiber.Ctx) error {
	if err := a.core.SwitchAccount(c.UserContext(), sessionOf(c), c.FormValue("account")); err != nil {
		return a.fail(c, err)
	}
	return c.Redirect("/app/", fiber.StatusSeeOther)
}
