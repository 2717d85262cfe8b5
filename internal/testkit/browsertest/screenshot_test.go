package browsertest_test

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/wshub/wshub/internal/testkit/browsertest"
)

func TestScreenshotsAreSavedAtDesktopAndPhoneWidths(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.ScreenshotDir = filepath.Join(t.TempDir(), "screens")
	b.Open(t, srv.URL+"/accessible")

	for _, width := range []int{browsertest.Desktop, browsertest.Phone} {
		path := b.Screenshot(t, "signup", width)
		if dir := filepath.Dir(path); dir != b.ScreenshotDir {
			t.Errorf("screenshot saved in %s, want %s", dir, b.ScreenshotDir)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := img.Bounds().Dx(); got != width {
			t.Errorf("%s is %d pixels wide, want %d", path, got, width)
		}
	}

	// The phone's narrower margin (the page's media query) is gone again: the tab is
	// back to the desktop window.
	b.WaitUntil(t, `window.innerWidth === 1280 && getComputedStyle(document.body).marginLeft === "32px"`)
}
