// Command wshub-bench measures a real hub and writes docs/benchmarks.md (make bench).
//
// It makes its own database on DATABASE_URL's server, seeds it through the hub's own
// use cases (and 10,000 workspaces by SQL), runs `wshub serve` as a separate process
// (so its memory is the hub's alone), and drives it with keep-alive HTTP clients. The
// PostgreSQL baseline replays, with pgbench, exactly the statements the hub sent for
// the request measured: captured from the server's statement log, not guessed. Every
// figure is a ratio measured side by side in one run; the machine is shared and noisy.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	hubBin := flag.String("hub", "bin/wshub", "the wshub binary to serve")
	out := flag.String("out", "docs/benchmarks.md", "where to write the report")
	dur := flag.Duration("duration", 5*time.Second, "how long each measurement runs")
	workspaces := flag.Int("workspaces", 10000, "workspaces in the account (B3)")
	messages := flag.Int("messages", 100000, "messages in the workspace whose page is read (B2)")
	files := flag.Int("files", 50000, "files in the repository of B7")
	soakMode := flag.Bool("soak", false, "run the soak (make soak) instead of the benchmarks")
	soakFor := flag.Duration("soak-load", 7*time.Minute, "how long the soak's load runs")
	kills := flag.Int("kills", 4, "times the soak SIGKILLs the hub")
	hubs := flag.Int("hubs", 1, "the soak's hubs: 1, or 2 (or more) sharing only the database, behind a balancer, with workspaces on the process provider; kills take them in turn")
	pgRestart := flag.String("pg-restart", "", "a script taking stop and start that the soak restarts PostgreSQL with (empty: no restart)")
	pglog := flag.String("pglog", ".data/pg/log", "the PostgreSQL server's log file (statement capture)")
	pin := flag.Bool("pin", false, "pin the hub to CPU 0 and PostgreSQL, pgbench and the load generator to CPU 1 (taskset), so the hub's CPU per request reads alone")
	only := flag.String("only", "", `run one measurement alone and replace its part of -out ("B8": event streams, "B9": blob stores, "B10": environments, "Scale": the scale run), or "API": B1', B2 and B3 alone, or "B5": the turns alone (network full, and a serial run with none), printed and not written (to read a change to the API path or the sandbox in a minute)`)
	scaleSizes := flag.String("scale", "1000,100000", "the scale run's sizes, in workspaces (20 messages each), smallest first")
	flag.Parse()
	if *pin {
		pinSelf()
	}
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		log.Fatal("DATABASE_URL is not set (make bench starts PostgreSQL and sets it)")
	}
	if *soakMode {
		if *hubs < 1 {
			log.Fatalf("-hubs: %d is not a number of hubs", *hubs)
		}
		ctx, cancel := context.WithTimeout(context.Background(), *soakFor+7*time.Minute)
		defer cancel()
		r := &run{base: base, hubBin: *hubBin}
		s, err := r.runSoak(ctx, *soakFor, *kills, *hubs, *pgRestart)
		if err != nil {
			log.Fatal(err)
		}
		s.command = "go run ./cmd/wshub-bench " + commandLine(os.Args[1:])
		report := s.markdown()
		old, err := os.ReadFile(*out)
		if err != nil && !os.IsNotExist(err) {
			log.Fatal(err)
		}
		if err := os.WriteFile(*out, []byte(s.place(string(old), report)), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Print(report)
		if n := s.failed(); n > 0 {
			log.Fatalf("soak: %d checks failed", n)
		}
		return
	}
	// A guard against a hang, not a budget: the full run is some 25 minutes on two
	// cores, the scale run's 100,000 workspaces included, and a loaded machine stretches it.
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	r := &run{base: base, hubBin: *hubBin, dur: *dur, workspaces: *workspaces, messages: *messages, pglog: *pglog, bigFiles: *files,
		captured: map[string][]string{}, only: *only, pin: *pin}
	for _, f := range strings.Split(*scaleSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("-scale: %q is not a number of workspaces", f)
		}
		r.scaleSizes = append(r.scaleSizes, n)
	}
	switch *only {
	case "":
	case "B8", "B9", "B10":
		r.workspaces = 33
	case "API", "Scale", "B5":
	default:
		log.Fatalf("-only: %q is not a measurement that runs alone (B5, B8, B9, B10, Scale, API)", *only)
	}
	run := r.all
	if *only == "Scale" {
		run = func(ctx context.Context) error { return r.scale(ctx, r.scaleSizes) }
	}
	if err := run(ctx); err != nil {
		log.Fatal(err)
	}
	report := r.markdown()
	if *only == "API" || *only == "B5" {
		fmt.Print(report)
		return
	}
	if *only != "" {
		var b strings.Builder
		begin, end := b8Begin, b8End
		switch *only {
		case "B9":
			r.blobFigures.markdown(&b)
			begin, end = b9Begin, b9End
		case "B10":
			r.envFigures.markdown(&b)
			begin, end = b10Begin, b10End
		case "Scale":
			r.scaleFigures.markdown(&b)
			begin, end = scaleBegin, scaleEnd
		default:
			r.streamFigures.markdown(&b)
		}
		old, err := os.ReadFile(*out)
		if err != nil && !os.IsNotExist(err) {
			log.Fatal(err)
		}
		report = splice(string(old), begin, end, b.String())
	}
	if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Print(report)
}

// commandLine is args as a shell would take them back.
func commandLine(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
