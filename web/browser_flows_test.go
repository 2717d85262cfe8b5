package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/browsertest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/oidctest"
	"github.com/wshub/wshub/webhook"
)

// The app's flows in a real browser, each as a person goes through it: the HTTP
// tests in web_test.go show the server's answers; these show that the pages, their
// forms and the browser's own rules (cookies, redirects across sites, what a page's
// markup may run) make the same flows work.

// signInInBrowser signs subject in as a person does: the app's sign-in button, then
// the subject's button on the provider's page. It returns the status of the page
// the sign-in lands on (after the provider's and the app's redirects).
func (s *site) signInInBrowser(b *browsertest.Browser, subject string) int {
	s.t.Helper()
	s.idp.SignInAs("") // the provider shows its page: the browser picks the person
	if code := b.Open(s.t, s.hub.URL+"/app/signin"); code != http.StatusOK {
		s.t.Fatalf("expected the sign-in page, got %d", code)
	}
	if code := b.Follow(s.t, `a[href="/app/signin/oidc"]`); code != http.StatusOK {
		s.t.Fatalf("expected the provider's page, got %d at %s", code, b.URL(s.t))
	}
	return b.Follow(s.t, fmt.Sprintf(`button[value=%q]`, subject))
}

// pathOf is the path of the page in the tab.
func pathOf(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	var path string
	b.Eval(t, `location.pathname`, &path)
	return path
}

// apiStatus calls the API with key from Go's own HTTP client, as a script would,
// and returns the status.
func apiStatus(t *testing.T, h *hubtest.Hub, key string) int {
	t.Helper()
	req, err := http.NewRequest("GET", h.URL+"/v1/api/projects", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func TestInABrowserAKeyMadeOnThePageWorksOnTheAPIUntilRevokedThere(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	b := browsertest.Start(t)
	if code := s.signInInBrowser(b, "ada-1"); code != http.StatusOK || pathOf(t, b) != "/app/workspaces" {
		t.Fatalf("expected the owner on the workspaces, got %d at %s", code, b.URL(t))
	}
	b.Open(t, s.hub.URL+"/app/keys")

	b.FillByLabel(t, "Name", "laptop")
	if code := b.Follow(t, "form.create button[type=submit]"); code != http.StatusCreated {
		t.Fatalf("expected the key created, got %d", code)
	}
	key := b.Value(t, "#new-key")
	if !strings.HasPrefix(key, "svc_") {
		t.Fatalf("expected the new key in its field, got %q", key)
	}
	if code := apiStatus(t, s.hub, key); code != http.StatusOK {
		t.Fatalf("expected the key from the page to work on the API, got %d", code)
	}

	// Back on the list, as a person comes back to revoke it: the link asks first, on a
	// page of its own that names the key, and its button revokes.
	b.Open(t, s.hub.URL+"/app/keys")
	if code := b.Follow(t, `a[aria-label="Revoke laptop"]`); code != http.StatusOK || !strings.HasSuffix(pathOf(t, b), "/revoke") {
		t.Fatalf("expected the revoke to be asked first, got %d at %s", code, b.URL(t))
	}
	if code := apiStatus(t, s.hub, key); code != http.StatusOK {
		t.Fatalf("expected the key still working while the revoke is only asked, got %d", code)
	}
	if code := b.Follow(t, `button.danger`); code != http.StatusOK || pathOf(t, b) != "/app/keys" {
		t.Fatalf("expected the revoke to land back on the keys, got %d at %s", code, b.URL(t))
	}
	var status string
	// The Status column is found by its heading: the table's columns grow.
	b.Eval(t, `(() => { const i = [...document.querySelectorAll("thead th")].findIndex(th => th.innerText === "Status");
		return [...document.querySelectorAll("tbody tr")].find(tr => tr.cells[0].innerText === "laptop")?.cells[i].innerText })()`, &status)
	if !strings.HasPrefix(status, "revoked") {
		t.Errorf("expected the key listed as revoked, got %q", status)
	}
	if code := apiStatus(t, s.hub, key); code != http.StatusUnauthorized {
		t.Fatalf("expected the revoked key refused at once, got %d", code)
	}
}

func TestInABrowserAWebhooksSecretShowsOnceOnly(t *testing.T) {
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure = true }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	rc := hubtest.NewReceiver(t, nil)
	b := browsertest.Start(t)
	s.signInInBrowser(b, "ada-1")

	b.Open(t, s.hub.URL+"/app/webhooks")
	b.FillByLabel(t, "URL", rc.URL)
	b.FillByLabel(t, "Description", "CI")
	if code := b.Follow(t, "form.create button[type=submit]"); code != http.StatusCreated {
		t.Fatalf("expected the endpoint created, got %d", code)
	}
	secret := b.Value(t, "#new-secret")
	if !strings.HasPrefix(secret, "whsec_") || !strings.Contains(b.Text(t, ".created"), "you will not see it again") {
		t.Fatalf("expected the secret shown once, got %q in %q", secret, b.Text(t, ".created"))
	}
	b.WaitFor(t, "button.copy")
	picture(t, b, "webhook-secret") // the page with its secret panel

	// Left and come back to: listed, and the secret nowhere in the page.
	b.Open(t, s.hub.URL+"/app/keys")
	if code := b.Open(t, s.hub.URL+"/app/webhooks"); code != http.StatusOK {
		t.Fatalf("expected the webhooks page, got %d", code)
	}
	var html string
	b.Eval(t, `document.documentElement.outerHTML`, &html)
	if strings.Contains(html, secret) || strings.Contains(html, `id="new-secret"`) {
		t.Errorf("the secret shows again after the page was left:\n%s", html)
	}
	if row := b.Text(t, "tbody tr"); !strings.Contains(row, rc.URL) || !strings.Contains(row, "CI") {
		t.Errorf("expected the endpoint listed, got %q", row)
	}
}

// settledAfter waits until the account's one delivery has recorded n attempts
// (its log rows are written in the same transaction) and returns it.
func settledAfter(t *testing.T, h *hubtest.Hub, n int) *core.Delivery {
	t.Helper()
	return eventually.Value(t, 30*time.Second, fmt.Sprintf("one delivery with %d attempts", n), func() (*core.Delivery, error) {
		ds, err := h.Service.Admin.ListDeliveries(context.Background(), h.Account.ID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 && ds[0].Attempts >= n {
			return ds[0], nil
		}
		return nil, fmt.Errorf("got %+v", ds)
	})
}

// deliverySection is one delivery as the log page shows it.
type deliverySection struct {
	Heading  string     `json:"heading"`
	Summary  string     `json:"summary"`
	Attempts [][]string `json:"attempts"` // each row's cells: attempt, started, status, took, answer
}

func readDeliveryLog(t *testing.T, b *browsertest.Browser) []deliverySection {
	t.Helper()
	var got []deliverySection
	b.Eval(t, `[...document.querySelectorAll("section.delivery")].map(s => ({
	heading: s.querySelector("h2").innerText,
	summary: s.querySelector("p").innerText,
	attempts: [...s.querySelectorAll("tbody tr")].map(tr => [...tr.cells].map(c => c.innerText)),
}))`, &got)
	return got
}

// A receiver that fails twice and then acknowledges: the endpoint's log, in the
// browser, shows the three attempts with their statuses, and Redeliver sends the
// event a fourth time. The secret the page showed is the one that signs them.
func TestInABrowserAnEndpointsDeliveryLogShowsEveryAttemptAndRedelivers(t *testing.T) {
	s := newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure, c.WebhookPoll = true, 50*time.Millisecond }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		if n := r.Attempt(); n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "busy, try again (attempt %d)", n)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	b := browsertest.Start(t)
	s.signInInBrowser(b, "ada-1")
	b.Open(t, s.hub.URL+"/app/webhooks")
	b.FillByLabel(t, "URL", rc.URL)
	if code := b.Follow(t, "form.create button[type=submit]"); code != http.StatusCreated {
		t.Fatalf("expected the endpoint created, got %d", code)
	}
	secret := b.Value(t, "#new-secret")
	if code := b.Follow(t, `a[href$="/deliveries"]`); code != http.StatusOK || !strings.Contains(b.Text(t, "main"), "No deliveries yet.") {
		t.Fatalf("expected the endpoint's empty log, got %d: %q", code, b.Text(t, "main"))
	}
	logURL := b.URL(t)

	s.hub.Call("POST", "/v1/api/workspaces", s.hub.Key, map[string]any{"agent": "agent_1", "model": "test-model", "prompt": "hi"}).Expect(t, 201, "")
	// The hub's clock stands still: each retry is due once the clock is moved to it.
	for n := 1; n <= 2; n++ {
		rc.Wait(t, n)
		d := settledAfter(t, s.hub, n)
		s.clock.Advance(d.NextAttemptAt.Sub(s.clock.Now()))
	}
	got := rc.Wait(t, 3)
	event := got[0].Event
	for i, r := range got {
		if err := webhook.VerifyAt(r.Body, r.Header.Get(webhook.HeaderSignature), secret, s.clock.Now(), 0); err != nil {
			t.Errorf("attempt %d is not signed with the secret the page showed: %v", i+1, err)
		}
	}
	if d := settledAfter(t, s.hub, 3); d.Status != core.DeliveryDelivered {
		t.Fatalf("expected the delivery delivered at the third attempt, got %+v", d)
	}

	if code := b.Open(t, logURL); code != http.StatusOK {
		t.Fatalf("expected the log, got %d", code)
	}
	log := readDeliveryLog(t, b)
	if len(log) != 1 || !strings.Contains(log[0].Heading, "workspace.turn.completed") || !strings.Contains(log[0].Heading, event.EventID) ||
		!strings.HasPrefix(log[0].Summary, "delivered after 3 of") {
		t.Fatalf("expected the event's one delivery, delivered after 3 attempts, got %+v", log)
	}
	want := []struct{ status, answer string }{{"500", "HTTP 500"}, {"500", "HTTP 500"}, {"200", `{"ok":true}`}}
	if len(log[0].Attempts) != len(want) {
		t.Fatalf("expected %d attempts listed, got %q", len(want), log[0].Attempts)
	}
	for i, w := range want {
		row := log[0].Attempts[i]
		if len(row) != 5 || row[0] != fmt.Sprint(i+1) || row[2] != w.status || !strings.Contains(row[4], w.answer) {
			t.Errorf("attempt %d: expected status %s and %q, got %q", i+1, w.status, w.answer, row)
		}
	}
	// The event's workspace, by its title, links to its page.
	var link struct{ Text, Href string }
	b.Eval(t, `(a => ({text: a.innerText, href: a.getAttribute("href")}))(document.querySelector("section.delivery p.workspace a"))`, &link)
	if link.Text != "hi" || link.Href != "/app/workspaces/"+event.WorkspaceID {
		t.Errorf("expected the workspace linked by its title, got %+v", link)
	}
	b.ScreenshotDir = screenshotDir()
	picture(t, b, "webhook-deliveries")

	if code := b.Follow(t, fmt.Sprintf(`button[aria-label="Redeliver %s"]`, event.EventID)); code != http.StatusOK || b.URL(t) != logURL {
		t.Fatalf("expected Redeliver to come back to the log, got %d at %s", code, b.URL(t))
	}
	if again := rc.Wait(t, 4)[3]; again.Attempt() != 4 || again.Event.EventID != event.EventID {
		t.Fatalf("expected attempt 4 of %s, got attempt %d of %s", event.EventID, again.Attempt(), again.Event.EventID)
	}
	settledAfter(t, s.hub, 4)
	b.Open(t, logURL)
	if log := readDeliveryLog(t, b); len(log) != 1 || !strings.HasPrefix(log[0].Summary, "delivered after 4 of") ||
		len(log[0].Attempts) != 4 || log[0].Attempts[3][2] != "200" {
		t.Errorf("expected the log to show the fourth attempt, got %+v", log)
	}
}

// The page's own forms, with their token taken out by a script, as a forged form
// would come: refused, and nothing done.
func TestInABrowserAFormWithoutItsCSRFTokenIsRefusedAndChangesNothing(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	b := browsertest.Start(t)
	s.signInInBrowser(b, "ada-1")
	removeToken := func(form string) {
		t.Helper()
		var left int
		b.Eval(t, fmt.Sprintf(`document.querySelector(%q).querySelector('input[name="csrf"]').remove(),
	document.querySelectorAll(%q).length`, form, form+` input[name="csrf"]`), &left)
		if left != 0 {
			t.Fatalf("the token of %s is still there", form)
		}
	}

	b.Open(t, s.hub.URL+"/app/keys")
	b.FillByLabel(t, "Name", "sneaky")
	removeToken("form.create")
	if code := b.Follow(t, "form.create button[type=submit]"); code != http.StatusForbidden ||
		!strings.Contains(b.Text(t, "main"), "did not come from this page") {
		t.Fatalf("expected the form refused in words, got %d: %q", code, b.Text(t, "main"))
	}
	picture(t, b, "csrf-refused") // the refusal's page
	keys, err := s.hub.Service.Admin.ListAPIKeys(context.Background(), s.hub.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "sneaky" {
			t.Errorf("a refused form made a key: %+v", k)
		}
	}

	// Nor does a sign-out without its token sign anyone out.
	b.Open(t, s.hub.URL+"/app/keys")
	removeToken(`form[action="/app/signout"]`)
	if code := b.Follow(t, `form[action="/app/signout"] button`); code != http.StatusForbidden {
		t.Fatalf("expected the sign-out refused, got %d", code)
	}
	if code := b.Open(t, s.hub.URL+"/app/keys"); code != http.StatusOK || pathOf(t, b) != "/app/keys" {
		t.Errorf("expected the session kept after a refused sign-out, got %d at %s", code, b.URL(t))
	}
}

// Values people typed, or a provider gave, go into the pages as text: shown as typed,
// with no element made from them and no script run. (The pages' Content-Security-
// Policy would stop an inline script or handler anyway; what is checked here is
// that the markup never reaches the page as markup.)
func TestInABrowserTypedValuesShowAsTextAndRunNothing(t *testing.T) {
	const script, img = `<script>window.__x=1</script>`, `"><img src=x onerror="window.__y=1">`
	hostile := script + " " + img
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure = true }))
	s.person("ada-1", "ada@example.com", "Ada "+hostile, core.RoleOwner)
	rc := hubtest.NewReceiver(t, nil)
	b := browsertest.Start(t)
	s.signInInBrowser(b, "ada-1")
	b.Open(t, s.hub.URL+"/app/webhooks")
	b.FillByLabel(t, "URL", rc.URL)
	b.FillByLabel(t, "Description", hostile)
	if code := b.Follow(t, "form.create button[type=submit]"); code != http.StatusCreated {
		t.Fatalf("expected the endpoint created, got %d", code)
	}

	for _, page := range []struct{ path, where, want string }{
		{"/app/webhooks", "tbody", hostile},         // the description
		{"/app/webhooks", ".who", "Ada " + hostile}, // the member's name, in every page's header
		{"/app/members", "tbody", "Ada " + hostile},
		{"/app/audit", "tbody", "Ada " + hostile},
	} {
		if code := b.Open(t, s.hub.URL+page.path); code != http.StatusOK {
			t.Fatalf("%s: %d", page.path, code)
		}
		if text := b.Text(t, page.where); !strings.Contains(text, page.want) {
			t.Errorf("%s: expected %q shown as text in %s, got %q", page.path, page.want, page.where, text)
		}
		var ran struct {
			Images   int      `json:"images"`
			Handlers int      `json:"handlers"`
			Scripts  []string `json:"scripts"`
			X        string   `json:"x"`
			Y        string   `json:"y"`
		}
		b.Eval(t, `({images: document.images.length, handlers: document.querySelectorAll("[onerror]").length,
	scripts: [...document.scripts].map(s => s.getAttribute("src")), x: typeof window.__x, y: typeof window.__y})`, &ran)
		if ran.Images != 0 || ran.Handlers != 0 || len(ran.Scripts) != 1 || ran.Scripts[0] != "/app/static/app.js" ||
			ran.X != "undefined" || ran.Y != "undefined" {
			t.Errorf("%s: a value became markup or ran: %+v", page.path, ran)
		}
	}
}

func TestInABrowserASessionEndsWhenIdleAndAtSignOut(t *testing.T) {
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.AppSessionIdle = 30 * time.Minute }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	b := browsertest.Start(t)
	keys := func() string {
		t.Helper()
		if code := b.Open(t, s.hub.URL+"/app/keys"); code != http.StatusOK {
			t.Fatalf("expected a page, got %d at %s", code, b.URL(t))
		}
		return pathOf(t, b)
	}

	s.signInInBrowser(b, "ada-1")
	s.clock.Advance(29 * time.Minute) // in use within the idle limit: kept, and touched
	if path := keys(); path != "/app/keys" {
		t.Fatalf("expected the session alive within its idle limit, got %s", path)
	}
	s.clock.Advance(31 * time.Minute)
	if path := keys(); path != "/app/signin" {
		t.Fatalf("expected the session ended after 31 idle minutes, got %s", path)
	}
	for _, c := range b.Cookies(t) {
		if c.Name == "wshub_session" {
			t.Errorf("expected the ended session's cookie cleared, got %+v", c)
		}
	}

	s.signInInBrowser(b, "ada-1")
	if code := b.Follow(t, `form[action="/app/signout"] button`); code != http.StatusOK || pathOf(t, b) != "/app/signin" {
		t.Fatalf("expected sign-out to land on the sign-in page, got %d at %s", code, b.URL(t))
	}
	if path := keys(); path != "/app/signin" {
		t.Fatalf("expected the session ended by sign-out, got %s", path)
	}
}

// The provider names the person's Slack team and user in Slack's own claims: one of
// a bound team signs in and lands in the bound account; one of another team is
// refused in words.
func TestInABrowserSlacksClaimsLandThePersonInTheBoundAccount(t *testing.T) {
	s := newSlackSite(t)
	if err := s.hub.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack,
		TeamID: "T0BOUND", AccountID: s.hub.Account.ID}); err != nil {
		t.Fatal(err)
	}
	s.idp.AddUser(oidctest.User{Subject: "U0SLACK", Name: "Sam", Email: "sam@example.com", Extra: map[string]any{
		"https://slack.com/team_id": "T0BOUND", "https://slack.com/user_id": "U0SLACK"}})
	s.idp.AddUser(oidctest.User{Subject: "U0OTHER", Name: "Oz", Extra: map[string]any{
		"https://slack.com/team_id": "T0UNBOUND", "https://slack.com/user_id": "U0OTHER"}})
	b := browsertest.Start(t)

	if code := s.signInInBrowser(b, "U0SLACK"); code != http.StatusOK || pathOf(t, b) != "/app/workspaces" ||
		b.Text(t, ".who") != "Sam · member of "+s.hub.Account.Name {
		t.Fatalf("expected Sam in the bound account as a member, got %d at %s: %q", code, b.URL(t), b.Text(t, "header"))
	}
	list, err := s.hub.Service.Admin.ListMembers(context.Background(), s.hub.Account.ID)
	if err != nil || len(list) != 1 || list[0].Member.Identities[0] != (core.Identity{Kind: core.IdentitySlack, Subject: "T0BOUND:U0SLACK"}) {
		t.Fatalf("expected Sam recorded by his Slack identity, got %+v (%v)", list, err)
	}

	b.Follow(t, `form[action="/app/signout"] button`)
	if code := s.signInInBrowser(b, "U0OTHER"); code != http.StatusForbidden || !strings.Contains(b.Text(t, "main"), "not a member of any account") {
		t.Fatalf("expected a person of an unbound team refused in words, got %d: %q", code, b.Text(t, "main"))
	}
	picture(t, b, "signin-refused") // the refused sign-in's page
}

// Discord signs a person in through its consent page (the fake Discord's, at
// Discord's own address for the browser): one with the gated server's role lands in
// its account; one without is refused in words.
func TestInABrowserDiscordSignInLetsThroughOnlyThoseWithTheRole(t *testing.T) {
	d := startFakeDiscord(t)
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) {
		c.DiscordAppID, c.DiscordClientSecret, c.DiscordHTTPClient, c.AppInsecure = d.clientID, d.secret, d.client(nil), true
	}))
	const server, role = "900000000000000001", "700000000000000007"
	if err := h.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformDiscord,
		TeamID: server, AccountID: h.Account.ID, Roles: []string{role}}); err != nil {
		t.Fatal(err)
	}
	b := browsertest.Start(t)
	// The app sends the browser to Discord's authorize page at Discord's address.
	b.Reroute(t, discordgo.EndpointDiscord, d.srv.URL+"/")
	signIn := func() int {
		t.Helper()
		if code := b.Open(t, h.URL+"/app/signin"); code != http.StatusOK {
			t.Fatalf("expected the sign-in page, got %d", code)
		}
		return b.Follow(t, "a.discord")
	}

	if code := b.Open(t, h.URL+"/app/signin"); code != http.StatusOK {
		t.Fatalf("expected the sign-in page, got %d", code)
	}
	picture(t, b, "signin-discord") // the sign-in page offering Discord

	d.signInAs("300000000000000001", "Dana", map[string][]string{server: {role}})
	if code := signIn(); code != http.StatusOK || pathOf(t, b) != "/app/workspaces" || b.Text(t, ".who") != "Dana · member of "+h.Account.Name {
		t.Fatalf("expected Dana in the gated account as a member, got %d at %s: %q", code, b.URL(t), b.Text(t, "body"))
	}
	if asked, exchanged := d.seen(); len(asked) != 1 || asked[0] != server || exchanged != 1 {
		t.Errorf("expected one code exchanged and the roles read in the gated server, got %d and %v", exchanged, asked)
	}
	list, err := h.Service.Admin.ListMembers(context.Background(), h.Account.ID)
	if err != nil || len(list) != 1 || list[0].Member.Identities[0] != (core.Identity{Kind: core.IdentityDiscord, Subject: "300000000000000001"}) {
		t.Fatalf("expected Dana recorded by her Discord id, got %+v (%v)", list, err)
	}

	b.Follow(t, `form[action="/app/signout"] button`)
	d.signInAs("300000000000000002", "Eli", map[string][]string{server: {"700000000000000008"}})
	if code := signIn(); code != http.StatusForbidden || !strings.Contains(b.Text(t, "main"), "not a member of any account") {
		t.Fatalf("expected Eli refused in words by the role gate, got %d: %q", code, b.Text(t, "main"))
	}
	if list, _ := h.Service.Admin.ListMembers(context.Background(), h.Account.ID); len(list) != 1 {
		t.Errorf("expected Eli kept out, got %d members", len(list))
	}
}
