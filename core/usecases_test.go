package core_test

import (
	"testing"

	"github.com/wshub/wshub/internal/testkit/coretest"
)

// Core's use cases, each reached before only through a whole hub, run here on core
// alone (internal/testkit/coretest). Every case runs on one database, one after another:
// cloning one costs more than all the cases together. Each case has workspaces of its
// own, and accounts of its own where it sets their limits; a case reads what its
// workspaces hold, never the whole database. (Retention, which sweeps the whole
// database, has a database of its own.)
func TestCoreUseCases(t *testing.T) {
	t.Parallel()
	c := coretest.New(t)
	c.AddWebhook(c.Account)
	for _, area := range []struct {
		name  string
		cases []coretest.Case
	}{
		{"sending and settling", sendingAndSettling},
		{"recording a turn", recordingATurn},
		{"approvals", approvals},
		{"quotas and fair claims", quotasAndFairClaims},
		{"pull-request state", pullRequestState},
		{"the usage page", usagePage},
		{"schedules", schedules},
	} {
		t.Run(area.name, func(t *testing.T) { c.With(t).Cases(t, area.cases...) })
	}
}
