package netguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The guarded client reaches loopback only when told to, and never follows a redirect
// inside: the dial is refused before connect, so nothing is sent there.
func TestTheClientDialsPublicAddressesOnly(t *testing.T) {
	t.Parallel()
	inside := "http://10.255.255.1:8080/latest/meta-data/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, inside, http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	if _, err := Client(5*time.Second, false).Get(srv.URL); !errors.Is(err, ErrProhibited) {
		t.Fatalf("expected loopback refused by a client for public addresses, got %v", err)
	}
	dev := Client(5*time.Second, true)
	resp, err := dev.Get(srv.URL)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("expected a development client to reach loopback, got %v", err)
	}
	_ = resp.Body.Close()
	if _, err := dev.Get(srv.URL + "/away"); !errors.Is(err, ErrProhibited) {
		t.Fatalf("expected the redirect to %s refused at its dial, got %v", inside, err)
	}
}
