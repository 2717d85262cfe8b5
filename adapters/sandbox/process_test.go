package sandbox

import (
	"bytes"
	"io"
	"testing"
	"time"
)

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"ab", "cd", "efg", "0123456789", "xy"} {
		_, _ = b.Write([]byte(s))
	}
	if got := b.String(); got != "789xy" {
		t.Errorf("tail: expected %q, got %q", "789xy", got)
	}
}

// What is read from fd 3 is bounded per second: reading four bursts' worth takes at
// least three bursts' refill time, however fast the writer is. (A lower bound only:
// a slow machine makes it longer, never shorter.)
func TestEventReadsAreBoundedPerSecond(t *testing.T) {
	const rate, burst = 64 << 10, 16 << 10
	data := bytes.Repeat([]byte("x"), 4*burst)
	start := time.Now()
	n, err := io.Copy(io.Discard, newRateReader(bytes.NewReader(data), rate, burst))
	took := time.Since(start)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("expected all %d bytes read, got %d, %v", len(data), n, err)
	}
	if min := time.Duration(3*burst) * time.Second / rate; took < min {
		t.Fatalf("expected reading %d bytes at %d/s (burst %d) to take at least %s, took %s", len(data), rate, burst, min, took)
	}
}
