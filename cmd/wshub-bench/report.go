package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// markdown is the report: the machine, each figure, and how to reproduce it.
func (r *run) markdown() string {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("Written by `make bench` (`cmd/wshub-bench`); rerun it to reproduce. The hub runs as a separate `wshub serve` ")
	b.WriteString("process with the workspace runtime and webhook delivery off, so only the API path is measured; the load ")
	b.WriteString("generator, the hub and PostgreSQL share this machine. The PostgreSQL baseline is pgbench replaying the ")
	b.WriteString("statements the hub sent for one such request, captured from the server's statement log, at the same ")
	b.WriteString("concurrency against the same database. Figures are comparable within one run only.\n\n")
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, %s; %s; %s. Run %s, %s per measurement.\n\n", cpuModel(), runtime.NumCPU(),
		memTotal(), runtime.Version(), pgVersion(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), r.dur)
	b.WriteString("| measurement | hub req/s | p50 ms | p99 ms | response bytes | errors | PostgreSQL tps (same SQL) | hub / PostgreSQL |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.results {
		base, ratio := "", ""
		if x.baseline != nil && x.baseline.err == "" && x.baseline.tps > 0 {
			base = fmt.Sprintf("%.0f", x.baseline.tps)
			ratio = fmt.Sprintf("%.0f%%", 100*x.perSec/x.baseline.tps)
		} else if x.baseline != nil {
			base = "(failed)"
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.2f | %.2f | %d | %d | %s | %s |\n", x.name, x.perSec, ms(x.p50), ms(x.p99), x.bytes,
			x.errors, base, ratio)
	}
	b.WriteString("\nResident memory of the hub process (B6):\n\n")
	for _, p := range r.rss {
		fmt.Fprintf(&b, "- %s: %.1f MiB\n", p.when, float64(p.kib)/1024)
	}
	if len(r.notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\nNot measured yet (issue #14): B1 with the runtime running and its pgbench baseline (the send's INSERTs need ")
	b.WriteString("fresh ids per replay), B4 webhook pipeline at 5,000 turns, B5 turns over 200 ")
	b.WriteString("workspaces, B7 create-to-ready for 50,000 files. `go test -bench` in `hub`, `bots/slack` and `bots/discord` ")
	b.WriteString("covers webhook throughput, turn-to-acknowledgement and mention-to-reply meanwhile.\n")
	return b.String()
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range splitLines(string(b)) {
		if strings.HasPrefix(line, "model name") {
			if _, v, ok := strings.Cut(line, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	var kib int
	for _, line := range splitLines(string(b)) {
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kib); err == nil {
			return fmt.Sprintf("%.0f GiB RAM", float64(kib)/(1<<20))
		}
	}
	return "? RAM"
}

func pgVersion() string {
	out, err := exec.Command("postgres", "--version").Output()
	if err != nil {
		return "PostgreSQL ?"
	}
	return strings.TrimSpace(string(out))
}
