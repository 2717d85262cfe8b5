package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The members and audit pages, for owners, and the account switcher.

func (a *app) membersPage(c *fiber.Ctx) error { return a.showMembers(c, fiber.StatusOK, "") }

type membersData struct {
	Members []*core.Membership
	// Invited are the pending invitations: an address and a role, nothing of a person.
	Invited []*core.Invitation
}

func (a *app) showMembers(c *fiber.Ctx, status int, notice string) error {
	list, err := a.core.ListMembers(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	invited, err := a.core.ListInvitations(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, status, "members", page{Title: "Members", Notice: notice, Data: membersData{Members: list, Invited: invited}})
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

func (a *app) withdrawInvitation(c *fiber.Ctx) error {
	return a.afterMemberChange(c, a.core.WithdrawInvitation(c.UserContext(), sessionOf(c), c.Params("id")))
}

// invitationsPage lists the invitations waiting for the signed-in person, to accept or
// decline: the only page of a person in no account yet.
func (a *app) invitationsPage(c *fiber.Ctx) error {
	list, err := a.core.MyInvitations(c.UserContext(), sessionOf(c))
	if err != nil {
		return a.fail(c, err)
	}
	return a.render(c, fiber.StatusOK, "invitations", page{Title: "Invitations", Data: list})
}

func (a *app) answerInvitation(c *fiber.Ctx) error {
	accept := c.Params("answer") == "accept"
	if _, err := a.core.AnswerInvitation(c.UserContext(), sessionOf(c), c.Params("id"), accept); err != nil {
		return a.fail(c, err)
	}
	if accept {
		return c.Redirect("/app/", fiber.StatusSeeOther) // the session is in the account now
	}
	return c.Redirect("/app/invitations", fiber.StatusSeeOther)
}

// inNoAccount are the pages a person in no account yet may open: their invitations
// (an owner's withdrawal there refuses them, as any owner's action) and signing out.
func inNoAccount(path string) bool {
	return path == "/app/signout" || path == "/app/invitations" || strings.HasPrefix(path, "/app/invitations/")
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
