package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/webhook"
)

const secret = "whsec_receiver_test"

func event(id string) []byte {
	return []byte(`{"eventId":"` + id + `","type":"workspace.turn.completed","createdAt":1700000000000,` +
		`"workspaceId":"ws_1","branch":"wshub/b","turnId":"turn_1","outcome":"completed",` +
		`"reply":{"text":"` + strings.Repeat("é", 100) + `","truncated":false},"messageId":"msg_1"}`)
}

func deliver(t *testing.T, h http.Handler, method string, body []byte, sig string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderSignature, sig)
	req.Header.Set(webhook.HeaderEventID, "evt_header")
	req.Header.Set(webhook.HeaderAttempt, "1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandler(t *testing.T) {
	var logs bytes.Buffer // log.Logger serialises writes; reads happen between requests
	h := newHandler(secret, log.New(&logs, "", 0))
	big := append(event("evt_big"), bytes.Repeat([]byte(" "), maxBody)...)

	tests := []struct {
		name    string
		method  string
		body    []byte
		sig     string
		want    int
		wantLog string
	}{
		{"valid delivery", http.MethodPost, event("evt_1"), webhook.Sign(secret, time.Now(), event("evt_1")), http.StatusNoContent, "outcome=completed"},
		{"duplicate", http.MethodPost, event("evt_1"), webhook.Sign(secret, time.Now(), event("evt_1")), http.StatusOK, "duplicate evt_1"},
		{"other event", http.MethodPost, event("evt_2"), webhook.Sign(secret, time.Now(), event("evt_2")), http.StatusNoContent, "event evt_2"},
		{"bad signature", http.MethodPost, event("evt_3"), webhook.Sign("whsec_other", time.Now(), event("evt_3")), http.StatusBadRequest, "no v1 signature matches"},
		{"stale timestamp", http.MethodPost, event("evt_4"), webhook.Sign(secret, time.Now().Add(-10*time.Minute), event("evt_4")), http.StatusBadRequest, "older than the tolerance"},
		{"missing signature", http.MethodPost, event("evt_5"), "", http.StatusBadRequest, "missing service-signature"},
		{"signed non-event", http.MethodPost, []byte("[]"), webhook.Sign(secret, time.Now(), []byte("[]")), http.StatusBadRequest, "not a valid event"},
		{"over-size body", http.MethodPost, big, webhook.Sign(secret, time.Now(), big), http.StatusRequestEntityTooLarge, ""},
		{"GET", http.MethodGet, nil, "", http.StatusMethodNotAllowed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := deliver(t, h, tc.method, tc.body, tc.sig)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d (body %q)", rec.Code, tc.want, rec.Body.String())
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Fatalf("log does not contain %q; got:\n%s", tc.wantLog, logs.String())
			}
		})
	}
	// The reply is logged cut to 80 characters, on a character boundary.
	if want := `reply="` + strings.Repeat("é", 80) + `…"`; !strings.Contains(logs.String(), want) {
		t.Fatalf("log does not contain %q; got:\n%s", want, logs.String())
	}
}

// Concurrent retries of one event: exactly one is processed, the rest are duplicates.
func TestHandlerConcurrentDuplicates(t *testing.T) {
	h := newHandler(secret, log.New(io.Discard, "", 0))
	body := event("evt_c")
	sig := webhook.Sign(secret, time.Now(), body)
	codes := make(chan int, 20)
	var wg sync.WaitGroup
	for range cap(codes) {
		wg.Go(func() { codes <- deliver(t, h, http.MethodPost, body, sig).Code })
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[http.StatusNoContent] != 1 || count[http.StatusOK] != cap(codes)-1 {
		t.Fatalf("status counts = %v, want one 204 and %d 200", count, cap(codes)-1)
	}
}
