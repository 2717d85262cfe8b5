package balancer_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wshub/wshub/internal/balancer"
)

// The balancer sends each request to the next hub, passes over one that refused a
// connection, and answers the request that met the refusal 502.
func TestBalancerTakesTurnsAndPassesOverARefusingHub(t *testing.T) {
	var hubs []*httptest.Server
	for _, name := range []string{"a", "b"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, name) }))
		t.Cleanup(srv.Close)
		hubs = append(hubs, srv)
	}
	lb, err := balancer.Start(hubs[0].URL, hubs[1].URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lb.Close)
	get := func() string {
		resp, err := http.Get(lb.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprint(resp.StatusCode)
		}
		return string(b)
	}
	var got []string
	for range 4 {
		got = append(got, get())
	}
	hubs[1].Close() // b refuses from now on
	for range 4 {
		got = append(got, get())
	}
	want := []string{"a", "b", "a", "b", "a", "502", "a", "a"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("expected answers %q, got %q", want, got)
	}
	if n := lb.Served()[hubs[1].Listener.Addr().String()]; n != 3 {
		t.Errorf("expected 3 requests sent to b (2 answered, 1 refused), got %d", n)
	}
}
