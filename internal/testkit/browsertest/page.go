package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Selectors are CSS selectors (document.querySelector's): "#email", "form.login
// button[type=submit]". A helper given one waits until a node matches it.

// Open loads url in the tab, waits until the page has loaded, and returns the HTTP
// status of its document (after any redirects).
func (b *Browser) Open(t testing.TB, url string) int {
	t.Helper()
	what := "open " + url
	return status(t, b, what, run(t, b, what, chromedp.NavigateResponse(url)))
}

// status is the HTTP status of the document a navigation loaded. chromedp gives no
// response when the page loaded without one of its own (a page served from memory);
// that fails the test in words rather than with a nil pointer.
func status(t testing.TB, b *Browser, what string, resp *network.Response) int {
	t.Helper()
	if resp == nil {
		t.Fatalf("browsertest: %s: the page loaded without an HTTP response of its own (page: %s)", what, b.location())
		return 0
	}
	return int(resp.Status)
}

// URL is the address of the page in the tab.
func (b *Browser) URL(t testing.TB) string {
	t.Helper()
	return run(t, b, "read the URL", chromedp.Location())
}

// Fill types value into the input or textarea that selector finds, replacing what
// it held, with the key events a person's typing makes.
func (b *Browser) Fill(t testing.TB, selector, value string) {
	t.Helper()
	b.do(t, fmt.Sprintf("fill %s", selector),
		clearField(chromedp.CSS(selector)),
		chromedp.SendKeys(chromedp.CSS(selector), value))
}

// FillByLabel is Fill for the field a person finds by its label: a <label> whose
// text is label (spaces collapsed), or an element whose aria-label is. A field
// without one is not found, which is the point: a person could not find it either.
func (b *Browser) FillByLabel(t testing.TB, label, value string) {
	t.Helper()
	field := byLabel(label)
	b.do(t, fmt.Sprintf("fill the field labelled %q", label),
		clearField(field),
		chromedp.SendKeys(field, value))
}

// clearField empties the field sel finds and tells the page, as deleting its text
// would. (chromedp.SetValue(sel, "") cannot: the empty string is dropped from the
// call's arguments on the way to the browser, so the field gets "undefined".)
func clearField[S chromedp.Selectable](sel S) chromedp.Action[chromedp.Void] {
	return chromedp.QueryAfter(sel, func(ctx context.Context, t *chromedp.Target, nodes []*chromedp.Node) (chromedp.Void, error) {
		node, err := cdp.Call(ctx, t, dom.ResolveNode, dom.ResolveNodeParams{NodeID: nodes[0].NodeID})
		if err != nil {
			return chromedp.Void{}, err
		}
		defer cdp.Call(ctx, t, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: node.Object.ObjectID})
		return chromedp.CallFunctionOn[chromedp.Void](`function() {
	this.value = "";
	this.dispatchEvent(new Event("input", {bubbles: true}));
}`, func(p *runtime.CallFunctionOnParams) { p.ObjectID = node.Object.ObjectID })(ctx, t)
	})
}

// byLabel selects the control a label names, as the browser associates them
// (label.control covers both for= and a control inside its label).
func byLabel(label string) chromedp.JSPath {
	return chromedp.JSPath(fmt.Sprintf(`(() => {
	const want = %s, norm = s => s.replace(/\s+/g, " ").trim();
	for (const l of document.querySelectorAll("label"))
		if (norm(l.textContent) === want && l.control) return l.control;
	for (const e of document.querySelectorAll("[aria-label]"))
		if (norm(e.getAttribute("aria-label")) === want) return e;
	return null;
})()`, jsString(label)))
}

// Click clicks the node selector finds once it is visible, as a mouse would at its
// centre, once the page has loaded: the click lands where the node is, not where it
// was before the page's styles moved it. It does not wait for what the click does:
// wait for that with WaitFor or WaitUntil, or use Follow for a click that loads a page.
func (b *Browser) Click(t testing.TB, selector string) {
	t.Helper()
	b.do(t, "click "+selector, pageLoaded, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
}

// Follow clicks the link or button that selector finds, as Click does, waits until
// the page the click loads has loaded, and returns its HTTP status (after any
// redirects, through other sites too, as a sign-in's). A click that loads no page
// fails at the Timeout.
func (b *Browser) Follow(t testing.TB, selector string) int {
	t.Helper()
	what := "follow " + selector
	// The page it is on has loaded first, so that the wait below sees the new
	// page's load and not this one's.
	b.do(t, what, pageLoaded, chromedp.WaitVisible(chromedp.CSS(selector)))
	resp := within(t, b, what, func(ctx context.Context) (*network.Response, error) {
		return chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
	})
	return status(t, b, what, resp)
}

// Text is the visible text of the node selector finds (its innerText).
func (b *Browser) Text(t testing.TB, selector string) string {
	t.Helper()
	return run(t, b, "read the text of "+selector, chromedp.Text(chromedp.CSS(selector)))
}

// Value is the value of the input, textarea or select that selector finds: what a
// person sees in the field (a read-only one too), which Text does not read.
func (b *Browser) Value(t testing.TB, selector string) string {
	t.Helper()
	return run(t, b, "read the value of "+selector, chromedp.Value(chromedp.CSS(selector)))
}

// Eval runs the JavaScript expression on the page in the tab, as it is now, and
// decodes its value (as JSON) into result; with result nil the value is dropped.
// An exception the script throws fails the test. undefined decodes as null.
// Wait first (WaitFor, WaitUntil) for what the expression needs to be there.
func (b *Browser) Eval(t testing.TB, expression string, result any) {
	t.Helper()
	what := "evaluate " + expression
	raw := run(t, b, what, chromedp.Evaluate[[]byte](expression))
	if result == nil {
		return
	}
	if len(raw) == 0 {
		raw = []byte("null")
	}
	if err := json.Unmarshal(raw, result); err != nil {
		t.Fatalf("browsertest: %s: decoding %s: %v", what, raw, err)
	}
}

// WaitFor waits until a node that selector finds is visible.
func (b *Browser) WaitFor(t testing.TB, selector string) {
	t.Helper()
	b.do(t, "wait for "+selector, chromedp.WaitVisible(chromedp.CSS(selector)))
}

// WaitUntil waits until the JavaScript expression is true on the page in the tab,
// as it is then: through navigations and redirects too (for example
// `location.pathname === "/app/"`), which is why it asks again rather than polling
// inside one page.
func (b *Browser) WaitUntil(t testing.TB, expression string) {
	t.Helper()
	b.do(t, "wait until "+expression, until(expression))
}

// pageLoaded waits until the page in the tab has loaded: its document parsed, and
// its styles, scripts and images in.
var pageLoaded = until(`document.readyState === "complete"`)

// until is WaitUntil's action: it asks again until the expression is true.
func until(expression string) chromedp.Action[chromedp.Void] {
	check := chromedp.Evaluate[bool](fmt.Sprintf("Boolean(%s)", expression))
	return chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var last error
		for {
			// An error (the page is being replaced, say) is a "not yet".
			ok, err := check(ctx, tgt)
			if ok {
				return nil
			}
			if err != nil && ctx.Err() == nil {
				last = err
			}
			select {
			case <-ctx.Done():
				if last != nil {
					return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
				}
				return fmt.Errorf("%w: it stayed false", ctx.Err())
			case <-tick.C:
			}
		}
	})
}

// Submit submits the form that selector finds (the form itself, or a field or
// button in it) as pressing its submit button does: the browser checks the fields'
// constraints and fires the submit event. It waits until the page the form loads has
// loaded, and returns its HTTP status (after any redirects); a form that loads no
// page (a script handled it, or a required field is empty) fails at the Timeout.
func (b *Browser) Submit(t testing.TB, selector string) int {
	t.Helper()
	what := "submit the form of " + selector
	// The page the form is on has loaded first: while it loads, its own lifecycle
	// events can still come, and the wait below could take them for the new page's
	// and return before the form's answer arrived.
	b.do(t, what, pageLoaded, chromedp.WaitReady(chromedp.CSS(selector)))
	submit := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
	const el = document.querySelector(%s);
	const form = el instanceof HTMLFormElement ? el : el.form ?? el.closest("form");
	if (!form) throw new Error("no form there");
	form.requestSubmit();
})()`, jsString(selector)))
	resp := within(t, b, what, func(ctx context.Context) (*network.Response, error) {
		return chromedp.RunResponse(ctx, submit)
	})
	return status(t, b, what, resp)
}

// Cookies are the browser's cookies for the page in the tab, HttpOnly ones included,
// with the attributes the browser keeps of them.
func (b *Browser) Cookies(t testing.TB) []*http.Cookie {
	t.Helper()
	got := within(t, b, "read the cookies", func(ctx context.Context) (network.GetCookiesResult, error) {
		return chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	})
	cookies := make([]*http.Cookie, 0, len(got.Cookies))
	for _, c := range got.Cookies {
		hc := &http.Cookie{
			Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			HttpOnly: c.HTTPOnly, Secure: c.Secure, SameSite: sameSite(c.SameSite),
		}
		if !c.Session {
			sec, frac := math.Modf(c.Expires)
			hc.Expires = time.Unix(int64(sec), int64(frac*1e9))
		}
		cookies = append(cookies, hc)
	}
	return cookies
}

func sameSite(s network.CookieSameSite) http.SameSite {
	switch s {
	case network.CookieSameSiteStrict:
		return http.SameSiteStrictMode
	case network.CookieSameSiteLax:
		return http.SameSiteLaxMode
	case network.CookieSameSiteNone:
		return http.SameSiteNoneMode
	}
	return http.SameSiteDefaultMode
}

// jsString is s as a JavaScript string literal (JSON's, which Go escapes so that it
// is safe in any script).
func jsString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// DisableScripts turns the page's JavaScript off in the tab, as for a person who
// browses without it, from the next page on. The test's own Eval still runs.
func (b *Browser) DisableScripts(t testing.TB) {
	t.Helper()
	within(t, b, "disable scripts", func(ctx context.Context) (cdp.Empty, error) {
		return chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	})
}

// Attach picks files (paths on this machine) in the file input selector finds, as a
// person choosing them in the browser's dialog does.
func (b *Browser) Attach(t testing.TB, selector string, paths ...string) {
	t.Helper()
	b.do(t, "attach files to "+selector, pageLoaded, chromedp.SetUploadFiles(chromedp.CSS(selector), paths))
}
