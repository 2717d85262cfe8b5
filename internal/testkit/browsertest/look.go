package browsertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The colour schemes a page can be asked for, as a system's dark mode does.
const (
	Light = "light"
	Dark  = "dark"
)

// ColorScheme makes the tab's pages see prefers-color-scheme as scheme (Light or
// Dark), from now on and on the page at hand, until it is called again.
func (b *Browser) ColorScheme(t testing.TB, scheme string) {
	t.Helper()
	if scheme != Light && scheme != Dark {
		t.Fatalf("browsertest: colour scheme %q is neither %q nor %q", scheme, Light, Dark)
	}
	within(t, b, "prefer the "+scheme+" colour scheme", func(ctx context.Context) (cdp.Empty, error) {
		return chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
	})
}

// Width shows the page at width CSS pixels, as Screenshot takes it (below 600 as a
// phone), until the next Width or Screenshot; Width(Desktop) is the browser's window.
func (b *Browser) Width(t testing.TB, width int) {
	t.Helper()
	what := fmt.Sprintf("show the page at %dpx", width)
	resize := viewportAt(width)
	if width == Desktop {
		resize = desktopWindow
	}
	// The new size reaches the page's styles a frame later: the wait is for the
	// media queries to see it.
	b.do(t, what, resize, until(fmt.Sprintf(`matchMedia("(width: %dpx)").matches`, width)))
}

// viewportAt is the viewport of width CSS pixels: a phone's below 600, a desktop
// window's above.
func viewportAt(width int) chromedp.Action[chromedp.Void] {
	if width < 600 {
		return chromedp.EmulateViewport(int64(width), phoneHeight,
			chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	return chromedp.EmulateViewport(int64(width), desktopHeight)
}

// WiderThanTheWindow lists, once the page has loaded, what makes it scroll sideways
// (the document wider than the window): the innermost elements that reach past the
// window's right edge, at most five, each as tag#id.class and its right edge. It is
// empty when the page fits.
func (b *Browser) WiderThanTheWindow(t testing.TB) []string {
	t.Helper()
	b.do(t, "wait for the page to load before measuring it", pageLoaded)
	return run(t, b, "measure the page's width", chromedp.Evaluate[[]string](`(() => {
	// clientWidth, the layout viewport's, is the device's width: a phone zooms out
	// to show a page that overflows, which widens innerWidth to the page.
	const w = document.documentElement.clientWidth;
	if (document.documentElement.scrollWidth <= w) return [];
	// An element reaches as far as its box, or its content where that spills out
	// of a box that does not scroll it (a word too long for its line).
	const reach = e => {
		const r = e.getBoundingClientRect();
		const spills = getComputedStyle(e).overflowX === "visible" && e.scrollWidth > e.clientWidth;
		return spills ? Math.max(r.right, r.left + e.scrollWidth) : r.right;
	};
	const past = [...document.body.querySelectorAll("*")].filter(e => reach(e) > w + 0.5);
	const inner = past.filter(e => !past.some(o => o !== e && e.contains(o)));
	const found = inner.slice(0, 5).map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
		[...e.classList].map(c => "." + c).join("") + " reaches " + Math.round(reach(e)) + "px");
	return found.length ? found : ["the document is " + document.documentElement.scrollWidth + "px wide in a " + w + "px window"];
})()`))
}
