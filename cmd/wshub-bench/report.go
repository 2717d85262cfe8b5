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
	b.WriteString("process: first with the workspace runtime and webhook delivery off, so the API path is measured alone (B1', B2, ")
	b.WriteString("B3), then with them on (B1, B4, B5, B7). The load generator, the hub and PostgreSQL share this machine; the ")
	b.WriteString("load is sent by a minimal keep-alive HTTP/1.1 client (a connection per client, the body skipped by its ")
	b.WriteString("length), so that it costs the core it shares with PostgreSQL about what pgbench's own client does. The ")
	b.WriteString("PostgreSQL baseline is pgbench replaying the statements the hub sent for one such request, captured from the ")
	b.WriteString("server's statement log, at the same concurrency against the same database, twice: with the simple protocol, ")
	b.WriteString("each statement parsed and planned on every run (the baseline the targets were set against), and prepared once ")
	b.WriteString("per connection (`-M prepared`), as the hub runs the statements of its hot paths: the same work for PostgreSQL as ")
	b.WriteString("the hub's, so the last column is the hub's own cost. Figures are comparable within one ")
	b.WriteString("run only. Where the hub's time goes on each path, and how to profile it: docs/performance.md.\n\n")
	fmt.Fprintf(&b, "Machine: %s, CPUs %s, %s; %s; %s. Run %s, %s per measurement.\n\n", cpuModel(), onlineCPUs(),
		memTotal(), runtime.Version(), pgVersion(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), r.dur)
	if r.pin {
		b.WriteString("Pinned (`-pin`): the hub alone on CPU 0; PostgreSQL, pgbench and the load generator on CPU 1. ")
		b.WriteString("Hub CPU per request is the hub process's user and system time over the measurement, divided by its requests.\n\n")
	}
	b.WriteString("| measurement | hub req/s | p50 ms | p99 ms | response bytes | errors | hub CPU µs/req | PostgreSQL tps (same SQL) | hub / PostgreSQL | PostgreSQL tps, prepared | hub / PostgreSQL, prepared |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range r.results {
		base, ratio, prep, prepRatio := "", "", "", ""
		if x.baseline != nil && x.baseline.err == "" && x.baseline.tps > 0 {
			base = fmt.Sprintf("%.0f", x.baseline.tps)
			ratio = fmt.Sprintf("%.0f%%", 100*x.perSec/x.baseline.tps)
		} else if x.baseline != nil {
			base = "(failed)"
		}
		if x.baseline != nil && x.baseline.preparedErr == "" && x.baseline.preparedTPS > 0 {
			prep = fmt.Sprintf("%.0f", x.baseline.preparedTPS)
			prepRatio = fmt.Sprintf("%.0f%%", 100*x.perSec/x.baseline.preparedTPS)
		} else if x.baseline != nil {
			prep = "(failed)"
		}
		cpu := ""
		if x.cpu > 0 && x.requests > 0 {
			cpu = fmt.Sprintf("%.0f", float64(x.cpu.Microseconds())/float64(x.requests))
		}
		fmt.Fprintf(&b, "| %s | %.0f | %.2f | %.2f | %d | %d | %s | %s | %s | %s | %s |\n", x.name, x.perSec, ms(x.p50), ms(x.p99), x.bytes,
			x.errors, cpu, base, ratio, prep, prepRatio)
	}
	b.WriteString("\nB1 and B1' send to workspaces of their own (client i to the i+2nd); their baseline is the send's ")
	b.WriteString("statements replayed with a fresh message id and the seq each replayed allocation returns (`sendReplay`). ")
	b.WriteString("B1 runs on a second hub with the runtime on: each send starts a turn of the trivial agent, so turns ")
	b.WriteString("and webhook deliveries run beside the requests measured.\n")
	b.WriteString("\nResident memory of the hub process (B6):\n\n")
	for _, p := range r.rss {
		fmt.Fprintf(&b, "- %s: %.1f MiB (anonymous %.1f, file-backed %.1f); proportional %.1f MiB\n", p.when, float64(p.kib)/1024,
			float64(p.anon)/1024, float64(p.file)/1024, float64(p.pss)/1024)
	}
	if len(r.rss) > 0 {
		b.WriteString("\n" + binaryFigures(r.hubBin) + "\n")
	}
	if len(r.notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	r.turnFigures.markdown(&b)
	r.targetsMarkdown(&b)
	if !r.streamFigures.ran.IsZero() {
		b.WriteString("\n")
		r.streamFigures.markdown(&b)
	}
	r.blobFigures.markdown(&b)
	r.envFigures.markdown(&b)
	r.scaleFigures.markdown(&b)
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

// markdown writes the runtime's figures: B5, B4 and B7.
func (f *turnFigures) markdown(b *strings.Builder) {
	if f.serial == 0 && len(f.createToReady) == 0 {
		return
	}
	b.WriteString("\nTurns, with a trivial command agent (`" + benchAgent + "`) in the bubblewrap sandbox, 8 workspaces ")
	b.WriteString("stepped at once:\n\n")
	b.WriteString("| measurement | figure |\n|---|---|\n")
	if f.serial > 0 {
		fmt.Fprintf(b, "| B5 one workspace, %d turns one after another: send accepted → reply recorded | p50 %.1f ms, p99 %.1f ms |\n",
			f.serial, ms(pct(f.serialTotal, 50)), ms(pct(f.serialTotal, 99)))
		fmt.Fprintf(b, "| B5 hub overhead per turn (the same, less the agent's own start-to-end) | p50 %.1f ms, p99 %.1f ms |\n",
			ms(pct(f.serialOverhead, 50)), ms(pct(f.serialOverhead, 99)))
	}
	if len(f.noneOverhead) > 0 {
		fmt.Fprintf(b, "| B5 the same with network none: send accepted → reply recorded; hub overhead | p50 %.1f ms; p50 %.1f ms, p99 %.1f ms |\n",
			ms(pct(f.noneTotal, 50)), ms(pct(f.noneOverhead, 50)), ms(pct(f.noneOverhead, 99)))
	}
	if len(f.lag) > 0 {
		fmt.Fprintf(b, "| B4 lag, turn recorded → delivery acknowledged by a local receiver (verifying each signature), the serial turns | p50 %.0f ms, p99 %.0f ms |\n",
			ms(pct(f.lag, 50)), ms(pct(f.lag, 99)))
	}
	if f.burstTurns > 0 {
		fmt.Fprintf(b, "| B5 burst: %d messages over %d workspaces from 32 clients (webhook delivery off), first send → last turn recorded | %.0f turns/s |\n",
			f.burstTurns, f.burstWorkspaces, f.burstTurnsPerS)
	}
	if f.drained > 0 {
		fmt.Fprintf(b, "| B4 a hub started with the burst's %d deliveries queued: start → last acknowledged | %.0f deliveries/s |\n",
			f.drained, f.deliveriesPerS)
	}
	if len(f.createToReady) > 0 {
		fmt.Fprintf(b, "| B7 create → ready, repository of %d files, one at a time (%d runs) | p50 %.0f ms, max %.0f ms |\n",
			f.files, len(f.createToReady), ms(pct(f.createToReady, 50)), ms(pct(f.createToReady, 100)))
	}
	if len(f.createToReadyTiny) > 0 {
		fmt.Fprintf(b, "| create → ready, one-file repository, %d created together from 16 clients | p50 %.0f ms, p99 %.0f ms |\n",
			len(f.createToReadyTiny), ms(pct(f.createToReadyTiny, 50)), ms(pct(f.createToReadyTiny, 99)))
	}
}
