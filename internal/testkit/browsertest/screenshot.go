package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The widths Screenshot is meant for, in CSS pixels: a desktop window, and a phone
// (an iPhone 12 to 15's 390).
const (
	Desktop = 1280
	Phone   = 390
)

// The viewport heights that go with them; a screenshot takes the whole page anyway.
const (
	desktopHeight = 800
	phoneHeight   = 844
)

// Screenshot saves the whole page at width CSS pixels as <ScreenshotDir>/<name>-<width>.png
// and returns the file's path. Below 600 pixels it is taken as a phone would show
// the page (mobile viewport, touch), above as a desktop window. The tab goes back to
// the desktop window afterwards.
func (b *Browser) Screenshot(t testing.TB, name string, width int) string {
	t.Helper()
	if name == "" || strings.ContainsAny(name, `/\`) {
		t.Fatalf("browsertest: screenshot name %q must be a plain file name", name)
	}
	dir := b.ScreenshotDir
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	what := fmt.Sprintf("screenshot %s at %dpx", name, width)
	// The page as it will be seen, not half loaded.
	b.do(t, what, pageLoaded, viewportAt(width))
	// 100: PNG, which keeps text sharp and diffs exact.
	png := run(t, b, what, chromedp.FullScreenshot(100))
	b.do(t, what, desktopWindow)
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	return path
}

// desktopWindow ends the emulation, back to the browser's window. (chromedp's
// ResetViewport, a zero-sized override, leaves the last width in place.)
var desktopWindow = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	if _, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
		return err
	}
	_, err := cdp.Call(ctx, t, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: false})
	return err
})
