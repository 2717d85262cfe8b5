package browsertest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/browsertest"
)

func TestAxeFindsNothingSeriousOnAnAccessiblePage(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/accessible")
	b.Axe(t)
}

func TestAxeFlagsAnUnlabeledInputAndLowContrast(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/inaccessible")

	impacts := map[string]string{}
	for _, v := range b.AxeViolations(t) {
		impacts[v.ID] = v.Impact
	}
	if impacts["label"] != "critical" || impacts["color-contrast"] != "serious" {
		t.Fatalf("violations = %v, want label (critical) and color-contrast (serious) among them", impacts)
	}

	r := record(t, b.Axe)
	if len(r.failed) != 1 {
		t.Fatalf("Axe on the inaccessible page did not fail the test once:\n%s", r)
	}
	for _, want := range []string{"label (critical)", "color-contrast (serious)", "#q", "Type a word"} {
		if !strings.Contains(r.failed[0], want) {
			t.Errorf("Axe's failure does not name %q:\n%s", want, r.failed[0])
		}
	}
}

func TestAxeSkipsWithAReasonWhenAxeCoreIsNotInstalled(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/accessible")
	t.Setenv(browsertest.EnvAxe, t.TempDir()+"/axe.min.js")

	r := record(t, b.Axe)
	if len(r.failed) != 0 || !slices.ContainsFunc(r.skipped, func(s string) bool { return strings.Contains(s, "scripts/axe.sh") }) {
		t.Fatalf("Axe without axe-core did not skip pointing at scripts/axe.sh:\n%s", r)
	}
}
