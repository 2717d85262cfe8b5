package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/wsruntime"
)

func TestHubLostAfterIsADurationAboveZero(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value string
		want  time.Duration
		err   string // "": accepted
	}{
		{"", wsruntime.DefaultHubLostAfter, ""},
		{"  ", wsruntime.DefaultHubLostAfter, ""},
		{"2s", 2 * time.Second, ""},
		{"10m0s", 10 * time.Minute, ""}, // as the hub passes it on
		{" 1h30m ", 90 * time.Minute, ""},
		{"0", 0, `WSHUB_RUNTIME_HUB_LOST_AFTER="0" must be more than 0`},
		{"0s", 0, `WSHUB_RUNTIME_HUB_LOST_AFTER="0s" must be more than 0`},
		{"-5m", 0, `WSHUB_RUNTIME_HUB_LOST_AFTER="-5m" must be more than 0`},
		{"10", 0, `WSHUB_RUNTIME_HUB_LOST_AFTER="10" is not a duration such as 10m or 90s`},
		{"ten minutes", 0, `WSHUB_RUNTIME_HUB_LOST_AFTER="ten minutes" is not a duration`},
	} {
		got, err := hubLostAfter(tt.value)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%q: expected %s, got %s (%v)", tt.value, tt.want, got, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: expected an error saying %q, got %s (%v)", tt.value, tt.err, got, err)
		}
	}
}

// logLines decodes the runtime's JSON log.
func logLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// `wshub runtime` against an address nothing listens on: it gives up after the
// setting, saying so in one line, and exits ExitHubLost; a bad setting stops it at
// once.
func TestRuntimeThatReachesNoHubExitsSayingWhy(t *testing.T) {
	t.Parallel()
	hubURL := "http://" + freePort(t) // nothing listens there
	env := testEnviron("WSHUB_RUNTIME_URL="+hubURL, "WSHUB_RUNTIME_TOKEN_FD", "WSHUB_RUNTIME_TOKEN_FILE", "WSHUB_RUNTIME_DIR="+t.TempDir())

	for _, tt := range []struct {
		setting string
		code    int
		says    []string
	}{
		{"1s", wsruntime.ExitHubLost, []string{"the hub at " + hubURL + " has been unreachable for ",
			"longer than WSHUB_RUNTIME_HUB_LOST_AFTER (1s): stopping any running turn and exiting"}},
		{"0", 1, []string{`WSHUB_RUNTIME_HUB_LOST_AFTER="0" must be more than 0`}},
	} {
		// A fresh copy each time: the runtime takes the token out of its environment.
		env := env.with("WSHUB_RUNTIME_TOKEN=wsrt_test", wsruntime.HubLostAfterVar+"="+tt.setting)
		var logs syncBuffer
		started := time.Now()
		code := run(context.Background(), []string{"runtime"}, env, &logs, &logs)
		if code != tt.code {
			t.Fatalf("%s: expected exit %d, got %d:\n%s", tt.setting, tt.code, code, logs.String())
		}
		var errs []string
		for _, l := range logLines(t, logs.String()) {
			if l["level"] == "ERROR" {
				errs = append(errs, fmt.Sprint(l["msg"], " ", l["err"]))
			}
		}
		if len(errs) != 1 {
			t.Fatalf("%s: expected one error line, got %q", tt.setting, errs)
		}
		for _, want := range tt.says {
			if !strings.Contains(errs[0], want) {
				t.Fatalf("%s: expected the error line to say %q, got %s", tt.setting, want, errs[0])
			}
		}
		if took := time.Since(started); tt.code == wsruntime.ExitHubLost && took < time.Second {
			t.Fatalf("expected the runtime to try for the setting's 1s, it gave up after %s", took)
		}
	}
}
