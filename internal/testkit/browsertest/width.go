package browsertest

import (
	"fmt"
	"testing"
)

// AtWidth runs check with the tab's page laid out at width CSS pixels, as Screenshot
// shows it (a phone below 600), then goes back to the desktop window: checks of a
// layout (axe-core's, or that nothing scrolls the page sideways) at a phone's width.
func (b *Browser) AtWidth(t testing.TB, width int, check func()) {
	t.Helper()
	what := fmt.Sprintf("lay the page out at %dpx", width)
	b.do(t, what, pageLoaded, viewportAt(width))
	defer b.do(t, "go back to the desktop window", desktopWindow)
	check()
}
