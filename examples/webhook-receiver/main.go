// Command webhook-receiver is a minimal receiver for wshub's workspace.turn.completed
// events (api.md section 6, docs/webhooks.md). It verifies each delivery with the
// webhook package, drops duplicates and logs the event.
//
//	WEBHOOK_SECRET=whsec_... ADDR=:9000 go run ./examples/webhook-receiver
package main

import (
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/wshub/wshub/webhook"
)

// maxBody bounds what is read before the signature is checked. Events are small (the
// reply is capped at 16,384 characters), so anything near 1 MiB is not from the hub.
const maxBody = 1 << 20

func main() {
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("WEBHOOK_SECRET is required (the whsec_... secret returned when the webhook was created)")
	}
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = ":9000"
	}
	logger := log.New(os.Stderr, "webhook-receiver: ", log.LstdFlags)
	srv := &http.Server{
		Addr:              addr,
		Handler:           newHandler(secret, logger),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second, // the hub gives up after 10 s anyway
	}
	logger.Printf("listening on %s", addr)
	log.Fatal(srv.ListenAndServe())
}

// newHandler returns the receiver's handler, separate from main so tests can drive it.
func newHandler(secret string, log *log.Logger) http.Handler {
	var (
		mu   sync.Mutex
		seen = map[string]bool{} // demo only: a real receiver keeps this in its database
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		// The signature covers the raw bytes: read them as they are, never re-encode.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			http.Error(w, "cannot read body", status)
			return
		}
		ev, err := webhook.ConstructEvent(body, r.Header.Get(webhook.HeaderSignature), secret)
		if err != nil {
			log.Printf("rejected delivery: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest) // any non-2xx is retried by the hub
			return
		}
		// Delivery is at least once. ev.EventID equals the service-event-id header but,
		// unlike the header, is covered by the signature, so it is the safer key. Here the
		// "work" is a log line; a receiver with real work records the ID only once that
		// work is done (ideally in the same transaction), so a crash means a retry, not a loss.
		mu.Lock()
		dup := seen[ev.EventID]
		seen[ev.EventID] = true
		mu.Unlock()
		if dup {
			log.Printf("duplicate %s (attempt %s), ignored", ev.EventID, r.Header.Get(webhook.HeaderAttempt))
			w.WriteHeader(http.StatusOK) // acknowledge, or the hub keeps retrying
			return
		}
		log.Printf("event %s: workspace=%s turn=%s outcome=%s reply=%q",
			ev.EventID, ev.WorkspaceID, ev.TurnID, ev.Outcome, firstRunes(ev.Reply.Text, 80))
		w.WriteHeader(http.StatusNoContent)
	})
}

// firstRunes cuts s to n characters without splitting a UTF-8 sequence.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}
