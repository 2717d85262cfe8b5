package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
	"github.com/wshub/wshub/jobs"
)

// Two replicas' schedule runners on one real database, under testing/synctest: the
// bubble's clock is fake (core reads it through SystemClock, as the hub does), the
// database and its I/O are real. A goroutine waiting on the database is not durably
// blocked, so the fake clock stands still until every statement has answered.
func TestTwoReplicasRunEachScheduleTickOnceAndATickMissedWhileNoHubRanOnceInItsWindow(t *testing.T) {
	t.Parallel()
	c := coretest.New(t, func(d *core.Deps) { d.Clock = core.SystemClock{} })
	replicas := []*core.Service{c.Service, c.Replica()}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		in := core.ScheduleInput{Name: new("triage"), ProjectID: &c.Project.ID, Agent: new("agent_1"), Model: new("m"),
			Prompt: new("triage the new issues"), Cron: new("*/10 * * * *"), TimeZone: new("Europe/Paris")}
		sc, err := c.Schedules.CreateSchedule(ctx, c.Account, in)
		if err != nil {
			t.Fatal(err)
		}
		t0 := sc.NextTickAt
		// No hub runs: the ticks at t0, +10m and +20m pass; then both replicas start at
		// +25m and run, between them, every tick to +60m.
		time.Sleep(time.Until(t0.Add(25 * time.Minute))) // sleep: fake time under testing/synctest: the hubs' outage
		stop := startRunners(t, replicas)
		time.Sleep(time.Until(t0.Add(65 * time.Minute))) // sleep: fake time under testing/synctest: the hour the replicas run across
		synctest.Wait()
		stop()

		runs, err := c.Schedules.ListScheduleRuns(ctx, c.Account, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		workspaces := map[string]bool{}
		for _, r := range runs {
			got = append(got, r.Outcome+"@"+r.Tick.Sub(t0).String())
			if r.WorkspaceID != "" {
				workspaces[r.WorkspaceID] = true
			}
		}
		want := "started@1h0m0s started@50m0s started@40m0s started@30m0s started@20m0s skipped_late@10m0s skipped_late@0s"
		if strings.Join(got, " ") != want {
			t.Fatalf("expected each tick once, newest first:\n%s\ngot:\n%s", want, strings.Join(got, " "))
		}
		if len(workspaces) != 5 {
			t.Errorf("expected a workspace per run, got %d", len(workspaces))
		}
		list, err := c.Workspaces.ListWorkspaces(ctx, c.Account)
		if err != nil || len(list) != 5 {
			t.Errorf("expected the account's five workspaces, got %d (%v)", len(list), err)
		}
	})
}

// startRunners runs a schedule runner per replica until the returned stop.
func startRunners(t *testing.T, replicas []*core.Service) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, len(replicas))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, svc := range replicas {
		r := &jobs.Schedules{Core: svc.ScheduleRuns, Log: quiet, Every: time.Minute}
		go func() { done <- r.Run(ctx) }()
	}
	return func() {
		cancel()
		for range replicas {
			if err := <-done; err != nil {
				t.Errorf("runner: %v", err)
			}
		}
	}
}
