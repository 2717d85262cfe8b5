package web

import (
	"crypto/subtle"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// A file for a workspace's next message is uploaded on its own, by the page's script,
// one request per file as the API takes them: the file is the body (its type in
// Content-Type, its name in X-File-Name, URL-encoded), bounded by the hub before it
// is read (MaxUploadBytes, by this route's prefix), and the message then names the
// files. Pages without script send text only.

// UploadPrefix is the uploads' path prefix, which the hub bounds to MaxUploadBytes.
const UploadPrefix = "/app/uploads/"

// MaxUploadBytes bounds an upload's body: one file, as the API's.
const MaxUploadBytes = core.MaxAssetBytes

// checkUpload is checkForm for a request whose body is a file: the session's token
// comes in a header, and only the app's own pages may send it.
func (a *app) checkUpload(c *fiber.Ctx) error {
	if c.Get("Sec-Fetch-Site") != "same-origin" {
		return c.Status(fiber.StatusForbidden).JSON(fiber.Map{"error": "An upload comes from the app's own pages."})
	}
	if subtle.ConstantTimeCompare([]byte(c.Get("X-CSRF-Token")), []byte(sessionOf(c).CSRF)) != 1 {
		return c.Status(fiber.StatusForbidden).JSON(fiber.Map{"error": "This page has expired; reload it and try again."})
	}
	return c.Next()
}

func (a *app) upload(c *fiber.Ctx) error {
	// An encoded body would be decoded to an unbounded size: only the bytes themselves.
	if enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding)); enc != "" && !strings.EqualFold(enc, "identity") {
		return c.Status(fiber.StatusUnsupportedMediaType).JSON(fiber.Map{"error": "Send the file as it is, not encoded."})
	}
	name, err := url.PathUnescape(c.Get("X-File-Name"))
	if err != nil {
		name = ""
	}
	key := c.Get("Idempotency-Key")
	in := core.UploadInput{ContentType: c.Get(fiber.HeaderContentType), FileName: given(name), HeaderKey: given(key),
		Body: c.Request().Body()} // the raw bytes: Ctx.Body would decode an encoding
	asset, err := a.workspaces.Upload(c.UserContext(), sessionOf(c), c.Params("id"), in)
	if refused, ok := refusal(err); ok {
		return c.Status(statusFor(refused)).JSON(fiber.Map{"error": refused.Detail})
	}
	if err != nil {
		a.log.Error("app upload", "workspace", c.Params("id"), "err", err)
		return c.Status(fiber.StatusInternalServerError).JSON(fiber.Map{"error": "The hub could not take the file; try again."})
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"id": asset.ID, "name": asset.OriginalName})
}

// inlineTypes are the attachment types the page shows as images: raster formats a
// browser decodes without running anything (SVG, which can hold script, is a download).
var inlineTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// isImage reports whether an attachment shows inline on the page.
func isImage(a *core.Asset) bool { return inlineTypes[a.MimeType] }

// file serves one of the workspace's files: an image for the page to show, anything
// else as a download. Either way under a policy that runs nothing and a type the
// browser may not second-guess.
func (a *app) file(c *fiber.Ctx) error {
	asset, data, err := a.workspaces.File(c.UserContext(), sessionOf(c), c.Params("id"), c.Params("asset"))
	if err != nil {
		return a.fail(c, err)
	}
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; sandbox")
	c.Set(fiber.HeaderCacheControl, "private, max-age=300")
	disposition := "attachment"
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	if isImage(asset) {
		disposition = "inline"
		c.Set(fiber.HeaderContentType, asset.MimeType)
	}
	c.Set(fiber.HeaderContentDisposition, disposition+"; filename*=UTF-8''"+url.PathEscape(asset.OriginalName))
	return c.Send(data)
}
