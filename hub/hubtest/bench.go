package hubtest

import (
	"slices"
	"testing"
	"time"
)

// ReportPercentiles reports the p50 and p99 of samples, in ms, on b (ns/op is the mean).
func ReportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	ms := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.5), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
}
