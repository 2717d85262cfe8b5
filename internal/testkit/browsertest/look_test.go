package browsertest_test

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/browsertest"
)

func TestTheDarkSchemeIsCheckedAsItIsSeen(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/themed")
	b.Axe(t) // light: black on white

	b.ColorScheme(t, browsertest.Dark)
	r := record(t, b.Axe)
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "color-contrast") || !strings.Contains(r.failed[0], "1280px, dark") {
		t.Fatalf("expected axe-core to fail the dark scheme's contrast at 1280px, got:\n%s", r)
	}
	b.ColorScheme(t, browsertest.Light)
	b.WaitUntil(t, `!matchMedia("(prefers-color-scheme: dark)").matches`)
}

func TestWiderThanTheWindowNamesWhatScrollsSideways(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/themed")
	if wide := b.WiderThanTheWindow(t); len(wide) != 0 {
		t.Errorf("expected the page to fit at 1280px, got %q", wide)
	}
	b.Width(t, browsertest.Phone)
	wide := b.WiderThanTheWindow(t)
	if len(wide) == 0 || !strings.Contains(strings.Join(wide, " "), "td reaches 50") {
		t.Errorf("expected the 500px table's cells named at 390px, got %q", wide)
	}
	b.Width(t, browsertest.Desktop)
	if wide := b.WiderThanTheWindow(t); len(wide) != 0 {
		t.Errorf("expected the page to fit at 1280px again, got %q", wide)
	}
}
