package browsertest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/browsertest"
)

// elsewhere is an address no test can reach: only a Reroute brings the browser there.
const elsewhere = "https://third-party.invalid/"

func TestARerouteServesAThirdPartysAddressFromItsStandIn(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Reroute(t, elsewhere, srv.URL+"/")

	if status := b.Open(t, elsewhere+"accessible"); status != http.StatusOK {
		t.Fatalf("open: status %d", status)
	}
	if got := b.URL(t); got != elsewhere+"accessible" {
		t.Errorf("the page is %s, want the third party's address", got)
	}
	// A form's POST reaches the stand-in with its body, and its redirect and cookie
	// come back to the browser.
	b.FillByLabel(t, "Your name", "Ada")
	b.FillByLabel(t, "Email", "ada@example.com")
	if status := b.Submit(t, "form"); status != http.StatusOK {
		t.Fatalf("submit: status %d, want 200 after the redirect", status)
	}
	if got := b.URL(t); got != elsewhere+"welcome" {
		t.Errorf("after the form, the page is %s, want %swelcome", got, elsewhere)
	}
	if got := b.Text(t, "h1"); got != "Welcome, Ada" {
		t.Errorf("h1 = %q, want the stand-in to have read the cookie it set", got)
	}
	var visitor string
	for _, c := range b.Cookies(t) {
		if c.Name == "visitor" && c.Domain == "third-party.invalid" {
			visitor = c.Value
		}
	}
	if visitor != "Ada" {
		t.Errorf("expected the stand-in's cookie kept for the third party, got %v", b.Cookies(t))
	}
}

// As an OAuth2 consent page does: the third party's page sends the browser back to
// the test's own site, which the browser reaches as it is.
func TestARerouteHandsARedirectBackToTheBrowser(t *testing.T) {
	srv := site(t)
	consent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/welcome?from="+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(consent.Close)
	b := browsertest.Start(t)
	b.Reroute(t, elsewhere, consent.URL+"/")

	if status := b.Open(t, elsewhere+"oauth2/authorize"); status != http.StatusOK {
		t.Fatalf("open: status %d", status)
	}
	if got := b.URL(t); got != srv.URL+"/welcome?from=/oauth2/authorize" {
		t.Errorf("the page is %s, want the site's welcome from the stand-in's path", got)
	}
	if got := b.Text(t, "h1"); got != "Welcome, stranger" {
		t.Errorf("h1 = %q", got)
	}
}

func TestARerouteToAStandInThatIsDownFailsInTheBrowser(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // its port now refuses connections
	b := browsertest.Start(t)
	b.Reroute(t, elsewhere, down.URL+"/")
	b.Timeout = 10 * time.Second

	r := record(t, func(tb testing.TB) { b.Open(tb, elsewhere+"anything") })
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "net::ERR_FAILED") {
		t.Fatalf("expected the open to fail with the browser's error, got:\n%s", r)
	}
}
