package browsertest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a test to see how a helper reports: it keeps what would
// fail or skip the test instead of doing it. Everything else (TempDir, Cleanup) is
// the real test's.
type recorder struct {
	testing.TB
	failed, skipped []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = append(r.skipped, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// record runs f with a recorder for t, in a goroutine of its own as a test runs, so
// that Fatalf and Skipf can end it.
func record(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func (r *recorder) String() string {
	return fmt.Sprintf("failed: %s\nskipped: %s", strings.Join(r.failed, "\n"), strings.Join(r.skipped, "\n"))
}
