package eventually

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what the helper failed with instead of ending
// the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	calls := 0
	r := &recorder{TB: t}
	Eventually(r, time.Minute, "the third call", func() bool { calls++; return calls == 3 })
	if r.failed != "" || calls != 3 {
		t.Fatalf("expected a pass on the third call, got %d calls and failure %q", calls, r.failed)
	}
}

func TestEventuallyFailsWithWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	start := time.Now()
	Eventually(r, 50*time.Millisecond, "the moon", func() bool { return false })
	if took := time.Since(start); took < 50*time.Millisecond || took > 2*time.Second {
		t.Errorf("expected the wait to end at its 50ms, it took %s", took)
	}
	if want := "expected the moon within 50ms"; r.failed != want {
		t.Fatalf("expected failure %q, got %q", want, r.failed)
	}
}

func TestNoErrorReportsTheLastError(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	n := 0
	NoError(r, 30*time.Millisecond, "a ready server", func() error { n++; return fmt.Errorf("refused %d", n) })
	if !strings.HasPrefix(r.failed, "expected a ready server within 30ms; last: refused ") ||
		!strings.HasSuffix(r.failed, fmt.Sprint(n)) {
		t.Fatalf("expected the last of %d errors in the failure, got %q", n, r.failed)
	}
}

func TestValueGivesTheValueThatHeld(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	n := 0
	got := Value(r, time.Minute, "a count of 4", func() (int, error) {
		n++
		if n < 4 {
			return n, errors.New("short")
		}
		return n, nil
	})
	if got != 4 || r.failed != "" {
		t.Fatalf("expected 4 and no failure, got %d and %q", got, r.failed)
	}
}

func TestWithinSaysWhetherItHeld(t *testing.T) {
	t.Parallel()
	if !Within(time.Minute, func() bool { return true }) {
		t.Error("expected a condition that holds to be reported as held")
	}
	if Within(10*time.Millisecond, func() bool { return false }) {
		t.Error("expected a condition that never holds to be reported as missed")
	}
}
