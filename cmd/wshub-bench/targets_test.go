package main

import (
	"strings"
	"testing"
	"time"
)

func TestTargetsStandBesideTheirFigures(t *testing.T) {
	r := &run{results: []result{
		{name: "B3 GET workspace, 1 clients", clients: 1, perSec: 900, baseline: &baseline{tps: 1000, preparedTPS: 1500}},
		{name: "B2 list messages, 200 of 10, 8 clients", clients: 8, perSec: 300, baseline: &baseline{tps: 200, preparedTPS: 600}},
		{name: "B1' send message, runtime idle, 8 clients", clients: 8, perSec: 90, p99: 15 * time.Millisecond, baseline: &baseline{tps: 100}},
		{name: "B1' send message, runtime idle, 32 clients", clients: 32, perSec: 90, p99: 25 * time.Millisecond, baseline: &baseline{tps: 100}},
		{name: "B1 send message, turns running, 8 clients", clients: 8, perSec: 70, baseline: &baseline{tps: 100}},
	}, rss: []rssPoint{{when: "idle, after start", kib: 30 * 1024, anon: 8 * 1024, pss: 12 * 1024}}}
	r.turnFigures.serialOverhead = []time.Duration{5 * time.Millisecond, 7 * time.Millisecond, 9 * time.Millisecond}
	r.turnFigures.noneOverhead = []time.Duration{4 * time.Millisecond}
	var b strings.Builder
	r.targetsMarkdown(&b)
	for _, want := range []string{
		"| GET workspace, 1 clients: hub / PostgreSQL prepared | 60% | ≥ 60% | yes |",
		"| GET workspace, 8 clients: hub / PostgreSQL prepared | not measured | ≥ 85% |  |",
		"| list messages, a 200-message page, 8 clients: hub / PostgreSQL prepared | 50% | ≥ 80% | no |",
		"| send, runtime idle, 32 clients: hub / PostgreSQL | 90% | ≥ 85% | yes |",
		"| send, runtime idle, 8 clients: p99 | 15.0 ms | < 20 ms | yes |",
		"| send while turns run, 8 clients: hub / PostgreSQL | 70% | ≥ 60% | yes |",
		"| hub overhead per trivial turn (B5), network full, p50 | 7.0 ms | ≤ 15 ms | yes |",
		"| hub overhead per trivial turn (B5), network none, p50 | 4.0 ms | ≤ 8 ms | yes |",
		"| burst of turns (B5) | not measured | ≥ 60 turns/s |  |",
		"| idle anonymous memory (B6) | 8.0 MiB (resident 30.0 MiB, proportional 12.0 MiB) | ≤ 10 MiB | yes |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
