package core

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestBoundedText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		max  int
		want string
	}{
		{"kept", []byte("HTTP 500: oops"), 1024, "HTTP 500: oops"},
		{"invalid bytes and NUL replaced", []byte("a\xffb\x00c"), 1024, "a\uFFFDb\uFFFDc"},
		{"a character cut by the read dropped", []byte("ab\xc3"), 1024, "ab"},
		{"cut on a character boundary", []byte(strings.Repeat("é", 10)), 5, "éé"},
		{"replacements counted in the bound", []byte("\xff\xff"), 4, "\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := boundedText(tc.in, tc.max)
			if got != tc.want || !utf8.ValidString(got) || len(got) > tc.max {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestParseDeliveryQuery(t *testing.T) {
	q, err := ParseDeliveryQuery("", "")
	if err != nil || q.Limit != DefaultDeliveriesPage || q.Before != nil {
		t.Fatalf("defaults: expected limit %d and no cursor, got %+v, %v", DefaultDeliveriesPage, q, err)
	}
	if q, err = ParseDeliveryQuery("", "999999999999999999999"); err != nil || q.Limit != MaxDeliveriesPage {
		t.Fatalf("expected a large limit capped at %d, got %+v, %v", MaxDeliveriesPage, q, err)
	}
	at := time.UnixMilli(1_700_000_000_123)
	cur := DeliveryCursor{CreatedAt: at, ID: "dlv_abc"}
	if q, err = ParseDeliveryQuery(cur.String(), "7"); err != nil || q.Limit != 7 || q.Before == nil ||
		!q.Before.CreatedAt.Equal(at) || q.Before.ID != "dlv_abc" {
		t.Fatalf("expected the cursor to round-trip, got %+v, %v", q, err)
	}
	for _, bad := range [][2]string{{"", "0"}, {"", "-1"}, {"", "ten"}, {"nodot", ""}, {"x.dlv_a", ""}, {"-5.dlv_a", ""}, {"12.", ""}} {
		if _, err := ParseDeliveryQuery(bad[0], bad[1]); err == nil || err.(*Error).Code != CodeInvalidRequest {
			t.Errorf("before=%q limit=%q: expected invalid_request, got %v", bad[0], bad[1], err)
		}
	}
}

func TestEarlierAttemptsAreThoseTheLogLeavesOut(t *testing.T) {
	for _, tc := range []struct {
		name          string
		attempts, log int
		want          int
	}{
		{"every attempt shown", 2, 2, 0},
		{"redelivered past the log's cap", 22, LogAttemptsShown, 2},
		{"made before the log was kept", 3, 0, 3},
		{"none yet", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Delivery{Attempts: tc.attempts, Log: make([]*DeliveryAttempt, tc.log)}
			if got := d.EarlierAttempts(); got != tc.want {
				t.Errorf("%d attempts, %d in the log: expected %d earlier, got %d", tc.attempts, tc.log, tc.want, got)
			}
		})
	}
}
