package web

import (
	"bytes"
	"html/template"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// An agent's reply is Markdown written by untrusted code. goldmark renders it without
// its raw-HTML option (raw HTML and javascript: links are left out), and bluemonday's
// policy for user content then keeps only harmless elements and http(s) and mailto
// links: two locks, so a flaw in one is not a hole.
var (
	markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))
	sanitize = func() *bluemonday.Policy {
		p := bluemonday.UGCPolicy()
		p.RequireNoFollowOnLinks(true)
		p.RequireNoReferrerOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		return p
	}()
)

// renderMarkdown is a reply as safe HTML; text goldmark cannot read is shown escaped.
func renderMarkdown(text string) template.HTML {
	var out bytes.Buffer
	if err := markdown.Convert([]byte(text), &out); err != nil {
		return template.HTML(template.HTMLEscapeString(text)) //nolint:gosec // escaped
	}
	return template.HTML(sanitize.SanitizeBytes(out.Bytes())) //nolint:gosec // sanitized by the policy above
}
