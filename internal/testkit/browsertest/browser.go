// Package browsertest drives a real browser for page tests: Debian's Chromium, headless,
// through chromedp, with helpers for what a page test does (open, fill, click, follow,
// read, evaluate, wait, submit, cookies), a reroute of a third party's address to its
// stand-in, screenshots at desktop and phone widths, and axe-core's accessibility
// check on the page at hand.
//
// The browser comes from scripts/chromium.sh and axe-core from scripts/axe.sh, which
// `make test` runs; without them the tests that need them skip, saying why.
//
// Every helper takes the test it reports to, so that one browser can serve several
// subtests, and waits on a condition (a node present, a page loaded, a script true),
// never a fixed time, up to the Browser's Timeout.
package browsertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultTimeout bounds each helper's wait. It is long because `make test` runs every
// package's tests at once on two cores, where a page that loads in 50ms alone can take
// seconds; a condition that holds is seen as soon as it does.
const DefaultTimeout = 60 * time.Second

// startTimeout bounds the browser's start, slower than an action on a busy machine.
const startTimeout = 90 * time.Second

// Browser is one headless Chromium with one tab, closed at the test's cleanup.
type Browser struct {
	// ScreenshotDir is where Screenshot writes its PNGs. Empty, it writes into a
	// directory of the test's, removed when the test ends.
	ScreenshotDir string
	// Timeout bounds each helper's wait; Start sets DefaultTimeout.
	Timeout time.Duration

	ctx context.Context
	// routes are the tab's Reroutes.
	routes routes
	// log is what chromedp said of the protocol, shown when a helper fails: it goes
	// nowhere else, as a t.Log after the test's end would panic.
	log *syncBuffer
}

// Start starts Chromium with a fresh profile in the test's temporary directory. It
// skips the test when Chromium is not installed, and fails it when it is but does
// not start.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := chromium(t)
	// Made before the cleanup below is registered, so it is removed after: the
	// browser is closed before its profile goes.
	profile := t.TempDir()
	// Chromium's own output is mostly its complaints that this machine has no D-Bus;
	// it is shown only when the browser does not start.
	out, log := &syncBuffer{}, &syncBuffer{}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(Desktop, desktopHeight),
		chromedp.CombinedOutput(out),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start as root with its sandbox on; the pages it
		// opens are the test's own.
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(log.printf), chromedp.WithLogf(log.printf))
	t.Cleanup(func() {
		// A graceful close lets Chromium stop its child processes, which would
		// otherwise still be writing into the profile as it is removed.
		closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := chromedp.Cancel(closeCtx); err != nil {
			t.Logf("browsertest: closing Chromium: %v", err)
		}
		cancelTab()
		cancelAlloc() // waits for the process to end
	})

	// The first action starts the browser and binds it to the context it runs
	// with, so it runs with ctx itself and a timer bounds it instead of a deadline.
	timer := time.AfterFunc(startTimeout, cancelAlloc)
	err := chromedp.Do(ctx)
	timer.Stop()
	if err != nil {
		t.Fatalf("browsertest: starting %s: %v%s%s", path, err, out.tail("Chromium"), log.tail("chromedp"))
	}
	return &Browser{Timeout: DefaultTimeout, ctx: ctx, log: log}
}

// do runs steps within the Timeout, failing the test with what it was doing.
func (b *Browser) do(t testing.TB, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	run(t, b, what, chromedp.Steps(steps...))
}

// run runs one action within the Timeout and returns its value, failing the test
// with what it was doing, on which page.
func run[T any](t testing.TB, b *Browser, what string, action chromedp.Action[T]) T {
	t.Helper()
	return within(t, b, what, func(ctx context.Context) (T, error) { return chromedp.Run(ctx, action) })
}

// within calls f with the tab's context bounded by the Timeout, as run does.
func within[T any](t testing.TB, b *Browser, what string, f func(ctx context.Context) (T, error)) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.Timeout)
	defer cancel()
	v, err := f(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("gave up after %v: %w", b.Timeout, err)
	}
	if err != nil {
		t.Fatalf("browsertest: %s: %v (page: %s)%s", what, err, b.location(), b.log.tail("chromedp"))
	}
	return v
}

// location is the page's URL for a failure message, or why it is not known.
func (b *Browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return fmt.Sprintf("unknown: %v", err)
	}
	return url
}

// syncBuffer collects the browser's output from chromedp's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) printf(format string, args ...any) {
	fmt.Fprintf(s, format+"\n", args...)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// tail is the end of what who said, for a failure message: "" when nothing.
func (s *syncBuffer) tail(who string) string {
	out := s.String()
	if out == "" {
		return ""
	}
	const max = 4000
	if len(out) > max {
		out = "..." + out[len(out)-max:]
	}
	return "\n" + who + " said:\n" + out
}
