package web

import (
	"crypto/subtle"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// contentPolicy: the pages load only their own script and style, never inline ones,
// and cannot be framed.
const contentPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders go on every response of the app.
func securityHeaders(c *fiber.Ctx) error {
	setSecurityHeaders(c)
	return c.Next()
}

func setSecurityHeaders(c *fiber.Ctx) {
	c.Set("Content-Security-Policy", contentPolicy)
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	c.Set(fiber.HeaderCacheControl, "no-store")
}

// cookieName is the session cookie: __Host- pins it to this host, path / and Secure.
func (a *app) cookieName() string {
	if a.opts.Insecure {
		return "wshub_session"
	}
	return "__Host-wshub_session"
}

func (a *app) setSessionCookie(c *fiber.Ctx, token string, expires time.Time) {
	c.Cookie(&fiber.Cookie{Name: a.cookieName(), Value: token, Path: "/", Expires: expires, HTTPOnly: true,
		Secure: !a.opts.Insecure, SameSite: fiber.CookieSameSiteLaxMode})
}

func (a *app) clearSessionCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: a.cookieName(), Value: "", Path: "/", Expires: time.Unix(1, 0), MaxAge: -1, HTTPOnly: true,
		Secure: !a.opts.Insecure, SameSite: fiber.CookieSameSiteLaxMode})
}

type sessionKey struct{}

// session finds the signed-in person's session, or sends them to sign in.
func (a *app) session(c *fiber.Ctx) error {
	s, err := a.core.Session(c.UserContext(), c.Cookies(a.cookieName()))
	if core.ErrorCode(err) == core.CodeSessionInvalid {
		a.clearSessionCookie(c)
		return c.Redirect("/app/signin", fiber.StatusSeeOther)
	}
	if err != nil {
		return a.fail(c, err)
	}
	s.Address = c.IP()
	c.Locals(sessionKey{}, s)
	if s.AccountID == "" && !inNoAccount(c.Path()) {
		return c.Redirect("/app/invitations", fiber.StatusSeeOther)
	}
	return c.Next()
}

func sessionOf(c *fiber.Ctx) *core.AppSession { return c.Locals(sessionKey{}).(*core.AppSession) }

// checkForm refuses a state-changing request that does not carry the session's CSRF
// token, or that another site sent (the browser says so in Sec-Fetch-Site). The token
// comes in the form's body or the X-CSRF-Token header, never the query string: a URL
// is copied into logs, histories and Referer headers.
func (a *app) checkForm(c *fiber.Ctx) error {
	s := sessionOf(c)
	if site := c.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return a.refuse(c, fiber.StatusForbidden, "This form came from another site and was refused.")
	}
	token := c.Get("X-CSRF-Token")
	if token == "" {
		token = string(c.Context().PostArgs().Peek("csrf"))
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) != 1 {
		return a.refuse(c, fiber.StatusForbidden, "This form has expired or did not come from this page. Go back, reload and try again.")
	}
	return c.Next()
}

// plainText refuses a request whose path, query or form holds a NUL character or
// bytes that are not UTF-8, in words, before any page reads it: every value the app
// is sent is checked here, so no handler meets one.
func (a *app) plainText(c *fiber.Ctx) error {
	err := core.CheckText("The address", string(c.Context().URI().Path()))
	visit := func(where string) func(k, v []byte) {
		return func(k, v []byte) {
			if err == nil {
				err = core.CheckText(where+" field’s name", string(k))
			}
			if err == nil {
				err = core.CheckText(where+" field “"+string(k)+"”", string(v))
			}
		}
	}
	c.Context().QueryArgs().VisitAll(visit("The address’s"))
	if err == nil && c.Method() == fiber.MethodPost {
		c.Context().PostArgs().VisitAll(visit("The form’s"))
	}
	if err != nil {
		return a.fail(c, err)
	}
	return c.Next()
}
