package browsertest

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// AtWidth runs check with the tab's page laid out at width CSS pixels, as Screenshot
// shows it (a phone below 600), then goes back to the desktop window: checks of a
// layout (axe-core's, or that nothing scrolls the page sideways) at a phone's width.
func (b *Browser) AtWidth(t testing.TB, width int, check func()) {
	t.Helper()
	what := fmt.Sprintf("lay the page out at %dpx", width)
	b.do(t, what, pageLoaded, viewportOf(width))
	defer b.do(t, "go back to the desktop window", desktopWindow)
	check()
}

// viewportOf is the emulation of a window width CSS pixels wide: a phone's (mobile
// viewport, touch) below 600, else a desktop window's.
func viewportOf(width int) chromedp.Action[chromedp.Void] {
	if width < 600 {
		return chromedp.EmulateViewport(int64(width), phoneHeight, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	return chromedp.EmulateViewport(int64(width), desktopHeight)
}
