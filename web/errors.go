package web

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The app answers its own errors (the hub's server hands it every error on /app):
// a page that says in words what went wrong, with the status, never the API's JSON.
// Uploads are the exception: the page's script sends them and reads JSON back.

// bodyLimits bound the app's request bodies by path prefix, the longest winning; the
// hub's server refuses a larger body before it is read.
var bodyLimits = map[string]int{"/app/": MaxFormBytes, UploadPrefix: MaxUploadBytes, ProjectsPrefix: MaxSecretFormBytes}

// handleError answers an error raised on the app's paths: by Fiber (no such page, a
// method the page does not take), by the server (a body too large, not read, or
// misframed), or returned by a handler (a page that failed to render).
func (a *app) handleError(c *fiber.Ctx, err error) error {
	setSecurityHeaders(c) // the error may come before the app's own middleware ran
	status, title, why := a.explain(c, err)
	if strings.HasPrefix(c.Path(), UploadPrefix) {
		return c.Status(status).JSON(fiber.Map{"error": why})
	}
	return a.errorPage(c, status, title, why)
}

// explain says what err means to the person, with the status and the page's title.
// Anything but a refusal is logged and said plainly.
func (a *app) explain(c *fiber.Ctx, err error) (status int, title, why string) {
	var ce *core.Error
	if errors.As(err, &ce) {
		return statusFor(ce), "Not done", ce.Detail
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return fe.Code, "Page not found", "There is no page at " + c.Path() + "."
		case fiber.StatusMethodNotAllowed:
			return fe.Code, "Not done", "The page at " + c.Path() + " does not take " + c.Method() + " requests."
		case fiber.StatusRequestEntityTooLarge:
			if strings.HasPrefix(c.Path(), UploadPrefix) {
				return fe.Code, "Too large", "The file is larger than the " + byteSize(MaxUploadBytes) + " a message's file may be."
			}
			return fe.Code, "Too large", "The form is larger than the " + byteSize(int64(limitOf(c.Path()))) + " the app takes; send less."
		case fiber.StatusBadRequest, fiber.StatusRequestTimeout, fiber.StatusRequestHeaderFieldsTooLarge:
			return fe.Code, "Not done", "The hub could not read the request; try again."
		}
	}
	a.log.Error("app", "method", c.Method(), "path", c.Path(), "err", err)
	return fiber.StatusInternalServerError, "Something went wrong", "Something went wrong on the hub; try again in a moment."
}

// limitOf is the body limit of the app's path.
func limitOf(path string) int {
	best, limit := -1, MaxFormBytes
	for p, n := range bodyLimits {
		if strings.HasPrefix(path, p) && len(p) > best {
			best, limit = len(p), n
		}
	}
	return limit
}

// errorPage shows why, with the status. Should the page itself fail to render, a
// plain one says the same: an error page has no error page of its own.
func (a *app) errorPage(c *fiber.Ctx, status int, title, why string) error {
	if err := a.render(c, status, "notice", page{Title: title, Notice: why}); err != nil {
		a.log.Error("app error page", "path", c.Path(), "err", err)
		c.Status(status).Type("html", "utf-8")
		return c.SendString(bareErrorPage)
	}
	return nil
}

const bareErrorPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Something went wrong · wshub</title></head>
<body><main><h1>Something went wrong</h1><p>The hub could not show this page; try again in a moment.</p>
<p><a href="/app/">Back to the app</a></p></main></body></html>
`
