package browsertest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/browsertest"
)

func TestAFormRoundTripLandsOnTheNextPageWithItsCookie(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	if status := b.Open(t, srv.URL+"/accessible"); status != http.StatusOK {
		t.Fatalf("open: status %d", status)
	}

	b.FillByLabel(t, "Your name", "Ada")
	b.FillByLabel(t, "Email", "ada@example.com")
	if status := b.Submit(t, "form"); status != http.StatusOK {
		t.Fatalf("submit: status %d, want 200 after the redirect", status)
	}
	if got := b.URL(t); got != srv.URL+"/welcome" {
		t.Errorf("after the form, the page is %s, want %s/welcome", got, srv.URL)
	}
	if got := b.Text(t, "h1"); got != "Welcome, Ada" {
		t.Errorf("h1 = %q, want %q", got, "Welcome, Ada")
	}

	var visitor *http.Cookie
	for _, c := range b.Cookies(t) {
		if c.Name == "visitor" {
			visitor = c
		}
	}
	if visitor == nil {
		t.Fatalf("no visitor cookie among %v", b.Cookies(t))
	}
	if visitor.Value != "Ada" || !visitor.HttpOnly || visitor.SameSite != http.SameSiteLaxMode || visitor.Path != "/" || !visitor.Expires.IsZero() {
		t.Errorf("visitor cookie = %+v, want Ada, HttpOnly, SameSite=Lax, Path=/, for the session", visitor)
	}
}

func TestFillReplacesWhatTheFieldHeld(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/accessible")

	b.Fill(t, "#name", "Grace")
	b.Fill(t, "#name", "Ada")
	b.Fill(t, "#email", "ada@example.com")
	b.Submit(t, "#name")
	if got := b.Text(t, "h1"); got != "Welcome, Ada" {
		t.Errorf("h1 = %q, want %q", got, "Welcome, Ada")
	}
}

func TestSubmitLeavesAFormWithAnEmptyRequiredFieldUnsent(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/accessible")
	b.Fill(t, "#name", "Ada") // the email stays empty
	b.Timeout = 2 * time.Second

	r := record(t, func(tb testing.TB) { b.Submit(tb, "form") })
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "submit the form of form") {
		t.Fatalf("Submit with an empty required field did not fail:\n%s", r)
	}
	b.Timeout = browsertest.DefaultTimeout
	if got := b.URL(t); got != srv.URL+"/accessible" {
		t.Errorf("the page is %s, want it still on the form", got)
	}
}

func TestFillByLabelDoesNotFindAFieldWithoutALabel(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/inaccessible")
	b.Timeout = 2 * time.Second

	r := record(t, func(tb testing.TB) { b.FillByLabel(tb, "Search", "word") })
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], `the field labelled "Search"`) {
		t.Fatalf("FillByLabel found a field with no label:\n%s", r)
	}
}

func TestClickRunsThePageScriptAndWaitForSeesWhatItAdds(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/scripted")

	b.Click(t, "#greet")
	b.WaitFor(t, "#greeting")
	if got := b.Text(t, "#greeting"); got != "Hello from the server" {
		t.Errorf("greeting = %q", got)
	}
}

func TestWaitUntilHoldsThroughANavigationThePageMakes(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/moving")

	b.WaitUntil(t, `location.pathname === "/welcome" && document.readyState === "complete"`)
	if got := b.Text(t, "h1"); got != "Welcome, stranger" {
		t.Errorf("h1 = %q, want the welcome page's", got)
	}
}

func TestOpenReturnsTheStatusOfThePage(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	if status := b.Open(t, srv.URL+"/nowhere"); status != http.StatusNotFound {
		t.Errorf("status = %d, want 404", status)
	}
}

func TestValueReadsAFieldAndEvalRunsAScript(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/accessible")

	b.Fill(t, "#name", "Ada")
	if got := b.Value(t, "#name"); got != "Ada" {
		t.Errorf("value = %q, want Ada", got)
	}
	b.Eval(t, `document.querySelector("#email").remove()`, nil)
	var left struct {
		Fields int     `json:"fields"`
		Gone   *string `json:"gone"`
	}
	b.Eval(t, `({fields: document.querySelectorAll("input").length, gone: window.nothingHere})`, &left)
	if left.Fields != 1 || left.Gone != nil {
		t.Errorf("after removing the email field: %+v, want one field and nothing for an undefined name", left)
	}
	var missing *int
	b.Eval(t, `undefined`, &missing)
	if missing != nil {
		t.Errorf("undefined decoded as %d, want nil", *missing)
	}

	b.Timeout = 5 * time.Second
	r := record(t, func(tb testing.TB) { b.Eval(tb, `(() => { throw new Error("no such thing") })()`, nil) })
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "no such thing") {
		t.Fatalf("a script that throws did not fail the test with its error:\n%s", r)
	}
}

func TestFollowReturnsTheStatusOfThePageAClickLoads(t *testing.T) {
	srv := site(t)
	b := browsertest.Start(t)
	b.Open(t, srv.URL+"/accessible")
	b.FillByLabel(t, "Your name", "Ada")
	b.FillByLabel(t, "Email", "ada@example.com")

	// The button posts the form, and the answer redirects: the status is the page's
	// at the end.
	if status := b.Follow(t, "button[type=submit]"); status != http.StatusOK {
		t.Fatalf("follow: status %d, want 200 after the redirect", status)
	}
	if got := b.Text(t, "h1"); got != "Welcome, Ada" {
		t.Errorf("h1 = %q, want the page the click loaded", got)
	}
}

// A page whose stylesheet has not come yet is not clicked, nor its form submitted:
// what the person would click is not where it will be, and the page's own events
// are still to come. Once the styles are in, both go ahead.
func TestClickAndSubmitWaitForThePageToLoad(t *testing.T) {
	styles := make(chan struct{})
	var release sync.Once
	free := func() { release.Do(func() { close(styles) }) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /styled", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, styledPage)
	})
	mux.HandleFunc("GET /slow.css", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-styles:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/css")
		io.WriteString(w, "#go { margin-top: 40rem; }")
	})
	plain := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Plain</title><h1>"+strings.TrimPrefix(r.URL.Path, "/")+"</h1>")
	}
	mux.HandleFunc("GET /start", plain)
	mux.HandleFunc("POST /sent", plain)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(free) // before the server's close, which waits for the stylesheet's handler
	b := browsertest.Start(t)
	// Open would wait for the page's load; the page's own navigation is not waited
	// for, so the page is reached with its stylesheet still coming.
	b.Open(t, srv.URL+"/start")
	b.Eval(t, `location.assign("/styled")`, nil)
	b.WaitUntil(t, `document.querySelector("#go") !== null`)

	b.Timeout = 2 * time.Second
	if r := record(t, func(tb testing.TB) { b.Click(tb, "#go") }); len(r.failed) != 1 || !strings.Contains(r.failed[0], "click #go") {
		t.Fatalf("Click went ahead on a page still loading:\n%s", r)
	}
	if r := record(t, func(tb testing.TB) { b.Submit(tb, "form") }); len(r.failed) != 1 || !strings.Contains(r.failed[0], "submit the form of form") {
		t.Fatalf("Submit went ahead on a page still loading:\n%s", r)
	}
	if got := b.Text(t, "#out"); got != "" {
		t.Fatalf("the button was pressed before the page loaded: %q", got)
	}
	b.Timeout = browsertest.DefaultTimeout

	free()
	b.Click(t, "#go")
	b.WaitUntil(t, `document.querySelector("#out").textContent === "pressed"`)
	if status := b.Submit(t, "form"); status != http.StatusOK || b.Text(t, "h1") != "sent" {
		t.Errorf("submit after the load: status %d, page %q", status, b.Text(t, "h1"))
	}
}

// styledPage's button moves down once its stylesheet (held back by the test) comes.
const styledPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Styled</title><link rel="stylesheet" href="/slow.css"></head>
<body><main><h1>Styled</h1>
<form method="post" action="/sent"><input type="hidden" name="x" value="1"></form>
<button id="go" type="button" onclick="document.querySelector('#out').textContent = 'pressed'">Go</button>
<p id="out"></p>
</main></body>
</html>`
