package browsertest

import "testing"

// AtWidth runs check with the tab's page laid out at width CSS pixels, as Screenshot
// shows it (a phone below 600), then goes back to the desktop window: checks of a
// layout (axe-core's, or that nothing scrolls the page sideways) at a phone's width.
// Both changes wait, as Width does, until the page's media queries see them.
func (b *Browser) AtWidth(t testing.TB, width int, check func()) {
	t.Helper()
	b.do(t, "wait for the page to load before laying it out", pageLoaded)
	b.Width(t, width)
	defer b.Width(t, Desktop)
	check()
}
