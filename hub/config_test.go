package hub_test

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/hub"
)

// A setting the hub cannot read stops it naming the variable the operator set, not
// the Go field behind it; every such setting is named at once.
func TestASettingThatCannotBeReadIsNamed(t *testing.T) {
	t.Setenv("WSHUB_TURN_TIMEOUT", "soon")
	t.Setenv("WSHUB_MAX_WORKSPACES", "many")
	t.Setenv("WSHUB_ROLES", "worker,api")
	_, err := hub.LoadConfig()
	if err == nil {
		t.Fatal("expected the settings refused")
	}
	for _, want := range []string{`WSHUB_TURN_TIMEOUT: unable to parse duration: time: invalid duration "soon"`,
		`WSHUB_MAX_WORKSPACES: strconv.ParseInt: parsing "many"`, `WSHUB_ROLES: unknown role "api"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("expected the error to say %q, got %v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "WSHUB_ROLES"); n != 1 {
		t.Errorf("expected WSHUB_ROLES named once (its parser names it), got %d times: %v", n, err)
	}
}
