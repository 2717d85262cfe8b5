package hub_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
)

// A replica's roles say which background jobs Hub.Run runs: every one unless
// WSHUB_ROLES names some; the concurrency settings of 0 that switched the worker and
// the deliveries off before roles still do.

func TestAReplicaTakesEveryRoleUnlessWSHUB_ROLESNamesSome(t *testing.T) {
	t.Setenv("WSHUB_ROLES", "")
	if c, err := hub.LoadConfig(); err != nil || !slices.Equal(c.Roles, hub.AllRoles) {
		t.Fatalf("expected every role by default, got %v (%v)", c.Roles, err)
	}
	t.Setenv("WSHUB_ROLES", "worker, sweeps")
	if c, err := hub.LoadConfig(); err != nil || !slices.Equal(c.Roles, hub.Roles{hub.RoleWorker, hub.RoleSweeps}) {
		t.Fatalf("expected the worker and the sweeps, got %v (%v)", c.Roles, err)
	}
	t.Setenv("WSHUB_ROLES", "worker,api")
	if _, err := hub.LoadConfig(); err == nil || !strings.Contains(err.Error(), `WSHUB_ROLES: unknown role "api"`) {
		t.Fatalf("expected WSHUB_ROLES=worker,api refused naming api, got %v", err)
	}
}

func TestAnUnknownRoleInAConfigBuiltInCodeIsRefused(t *testing.T) {
	store, dbURL := pgtest.NewStore(t)
	cfg := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}, Roles: hub.Roles{"Worker"}}
	if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), `unknown role "Worker"`) {
		t.Fatalf("expected the role Worker refused, got %v", err)
	}
}

const (
	workerRuns     = "github.com/wshub/wshub/jobs.(*Worker).Run"
	deliveriesRun  = "github.com/wshub/wshub/jobs.(*Deliveries).Run"
	chatRuns       = "github.com/wshub/wshub/jobs.(*Chat).Run"
	socketModeRuns = "github.com/wshub/wshub/bots/slack.(*Bot).RunSocketMode("
	gatewayRuns    = "github.com/wshub/wshub/bots/discord.(*Bot).Run"
	sweepsRun      = "github.com/wshub/wshub/jobs.(*Sweeps).Run"
	informerRuns   = "github.com/wshub/wshub/adapters/kube.(*Machines).Watch"
	listenerRuns   = "github.com/wshub/wshub/adapters/postgres.(*Listener).Run"
)

func TestRunRunsTheJobsOfItsRolesOnly(t *testing.T) {
	for _, c := range []struct {
		name          string
		edit          func(*hub.Config)
		runs, doesNot []string
	}{
		{"the deliveries and chat", func(c *hub.Config) { c.Roles = hub.Roles{hub.RoleDeliveries, hub.RoleChat} },
			[]string{listenerRuns, deliveriesRun, chatRuns, socketModeRuns, gatewayRuns}, []string{workerRuns, sweepsRun, informerRuns}},
		{"the worker and sweeps", func(c *hub.Config) { c.Roles = hub.Roles{hub.RoleWorker, hub.RoleSweeps} },
			[]string{listenerRuns, workerRuns, sweepsRun, informerRuns}, []string{deliveriesRun, chatRuns, socketModeRuns, gatewayRuns}},
		{"none: LISTEN only, for the API's waiters", func(c *hub.Config) { c.Roles = nil },
			[]string{listenerRuns}, []string{workerRuns, deliveriesRun, chatRuns, socketModeRuns, gatewayRuns, sweepsRun, informerRuns}},
		{"every role, the worker and deliveries switched off as before roles", func(c *hub.Config) {
			c.MaxActiveWorkspaces, c.WebhookConcurrency = 0, 0
		}, []string{listenerRuns, chatRuns, sweepsRun, informerRuns}, []string{workerRuns, deliveriesRun}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, dbURL := pgtest.NewStore(t)
			cfg := unreachableParts(t, dbURL)
			c.edit(&cfg)
			h, err := hub.New(cfg, store, nil, hub.Options{})
			if err != nil {
				t.Fatalf("build hub: %v", err)
			}
			now, stop := runUntil(t, h, goroutines(), c.runs...)
			defer stop()
			for _, fn := range c.doesNot {
				if running(now, fn) {
					t.Errorf("expected %s not running", fn)
				}
			}
		})
	}
}
