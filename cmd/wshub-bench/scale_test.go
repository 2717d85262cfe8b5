package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestScaleTableSetsTheLargestSizeBesideTheSmallest(t *testing.T) {
	small := map[string]time.Duration{}
	large := map[string]time.Duration{}
	for _, name := range scaleNames {
		small[name], large[name] = time.Millisecond, 1200*time.Microsecond
	}
	large[scaleNames[2]] = 1500 * time.Microsecond
	f := scaleFigures{duration: time.Second, sizes: []scaleSize{
		{workspaces: 1000, messages: 21000, generate: 2 * time.Second, p50: small},
		{workspaces: 100000, messages: 2001000, generate: 90 * time.Second, p50: large},
	}}
	var b strings.Builder
	f.markdown(&b)
	for _, want := range []string{
		"| p50, ms | 1,000 workspaces, 21,000 messages | 100,000 workspaces, 2,001,000 messages | largest / smallest | within target |",
		"| GET workspace, 8 clients | 1.00 | 1.20 | 1.20 | yes |",
		"| a 200-message page, 8 clients | 1.00 | 1.50 | 1.50 | no |",
		"| generating (SQL, ANALYZE), s | 2.0 | 90.0 | | |",
		scaleBegin, scaleEnd,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("expected %q in\n%s", want, b.String())
		}
	}
}

func TestMemoryReadsTheProportionalSetSize(t *testing.T) {
	self, err := os.FindProcess(os.Getpid()) // a process surely running, its memory mapped
	if err != nil {
		t.Fatal(err)
	}
	p := (&server{cmd: &exec.Cmd{Process: self}}).memory("now")
	if p.kib <= 0 || p.pss <= 0 || p.pss > p.kib {
		t.Errorf("expected a resident size and a proportional size within it, got RSS %d KiB, PSS %d KiB", p.kib, p.pss)
	}
}

func TestBinaryFiguresCountWhatTheHubLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the hub's dependencies")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got := binaryFigures(bin)
	t.Log(got)
	for _, want := range []string{" MiB, ", " packages linked", " of the standard library, ", " modules"} {
		if !strings.Contains(got, want) {
			t.Errorf("expected %q in %q", want, got)
		}
	}
}
