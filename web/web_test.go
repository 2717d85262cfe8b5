package web_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/oidctest"
	"github.com/wshub/wshub/web"
)

// site is a hub with the app signing in through a real OpenID provider, and a
// browser-like client (cookies kept, redirects followed) for one person.
type site struct {
	t     *testing.T
	hub   *hubtest.Hub
	idp   *oidctest.Provider
	web   *http.Client
	clock *hubtest.Clock
}

func newSite(t *testing.T, opts ...hubtest.Option) *site {
	t.Helper()
	return startSite(t, false, opts...)
}

// newSlackSite is a site whose provider stands in for Slack: the hub believes the
// Slack team and user its ID tokens name, as it believes only Slack's.
func newSlackSite(t *testing.T) *site {
	t.Helper()
	return startSite(t, true)
}

func startSite(t *testing.T, slack bool, opts ...hubtest.Option) *site {
	t.Helper()
	idp := oidctest.Start(t)
	clock := hubtest.NewClock()
	opts = append([]hubtest.Option{hubtest.WithClock(clock), hubtest.WithConfig(func(c *hub.Config) {
		c.OIDCIssuer, c.OIDCClientID, c.OIDCClientSecret, c.OIDCName = idp.Issuer(), "wshub-app", "app-secret", "Test SSO"
		if slack {
			c.OIDCSlackIssuer = idp.Issuer()
		}
		// Plain http on loopback: the cookie drops __Host- and Secure, which Go's
		// cookie jar would not send over http.
		c.AppInsecure = true
	})}, opts...)
	h := hubtest.Start(t, opts...)
	idp.AddClient("wshub-app", "app-secret", h.URL+"/app/signin/callback")
	return &site{t: t, hub: h, idp: idp, web: browserClient(t), clock: clock}
}

func browserClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// person adds a user to the provider and, unless role is "", to the hub's account.
func (s *site) person(subject, email, name string, role core.Role) {
	s.t.Helper()
	s.idp.AddUser(oidctest.User{Subject: subject, Email: email, Name: name})
	if role == "" {
		return
	}
	id, err := core.NewIdentity(core.IdentityEmail, email)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.hub.Service.Admin.AddMember(context.Background(), s.hub.Account.ID, id, role, name); err != nil {
		s.t.Fatal(err)
	}
}

// get fetches a page of the app, following redirects; it returns the last status,
// URL and body.
func (s *site) get(path string) (int, string, string) {
	s.t.Helper()
	res, err := s.web.Get(s.hub.URL + path)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	return read(s.t, res)
}

func (s *site) post(path string, form url.Values) (int, string, string) {
	s.t.Helper()
	return s.postWith(path, form)
}

// postWith is post with headers of its own (name, value, name, value...).
func (s *site) postWith(path string, form url.Values, headers ...string) (int, string, string) {
	s.t.Helper()
	req, err := http.NewRequest("POST", s.hub.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := s.web.Do(req)
	if err != nil {
		s.t.Fatalf("POST %s: %v", path, err)
	}
	return read(s.t, res)
}

func read(t *testing.T, res *http.Response) (int, string, string) {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Request.URL.Path, string(b)
}

// ownerSignedIn is a site with Ada, an owner, signed in, and her form token.
func ownerSignedIn(t *testing.T) (*site, string) {
	t.Helper()
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page := s.signIn("ada-1")
	return s, csrfOf(t, page)
}

// signIn goes through the provider as subject and lands on the app.
func (s *site) signIn(subject string) (int, string, string) {
	s.t.Helper()
	s.idp.SignInAs(subject)
	return s.get("/app/signin/oidc")
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", page)
	}
	return m[1]
}

var notice = regexp.MustCompile(`(?s)<p class="notice" role="alert">(.*?)</p>`)

// noticeOf is what a page says at its top, or its title when it says nothing.
func noticeOf(page string) string {
	if m := notice.FindStringSubmatch(page); m != nil {
		return html.UnescapeString(m[1])
	}
	if m := regexp.MustCompile(`<title>(.*?)</title>`).FindStringSubmatch(page); m != nil {
		return "page " + html.UnescapeString(m[1])
	}
	return fmt.Sprintf("%.200q", page)
}

var newKey = regexp.MustCompile(`value="(svc_[0-9A-Za-z]+)"`)

func TestAnOwnerSignsInCreatesAKeyThatWorksAndRevokesIt(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)

	if code, path, _ := s.get("/app/keys"); code != 200 || path != "/app/signin" {
		t.Fatalf("expected a stranger sent to sign in, got %d at %s", code, path)
	}
	if code, path, _ := s.signIn("ada-1"); code != 200 || path != "/app/workspaces" {
		t.Fatalf("expected the owner signed in on the workspaces, got %d at %s", code, path)
	}
	code, path, page := s.get("/app/keys")
	if code != 200 || path != "/app/keys" || !strings.Contains(page, "Keys of this account") {
		t.Fatalf("expected the owner on the keys page, got %d at %s:\n%s", code, path, page)
	}

	code, _, page = s.post("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {"ci"}})
	m := newKey.FindStringSubmatch(page)
	if code != 201 || m == nil || !strings.Contains(page, "you will not see it again") {
		t.Fatalf("expected the new key shown once, got %d:\n%s", code, page)
	}
	key := m[1]
	if r := s.hub.Call("GET", "/v1/api/projects", key, nil); r.Status != 200 {
		t.Fatalf("expected the app's key to work on the API, got %d", r.Status)
	}
	// The list shows it with its creator, never the key.
	_, _, page = s.get("/app/keys")
	if strings.Contains(page, key) || !strings.Contains(page, "<td>ci</td>") || !strings.Contains(page, `<td data-label="Created by">Ada</td>`) {
		t.Fatalf("expected the key listed by name and creator, without the key:\n%s", page)
	}
	ids := regexp.MustCompile(`<td>ci</td>(?s:.*?)href="/app/keys/(key_[0-9A-Za-z]+)/revoke"`).FindStringSubmatch(page)
	if ids == nil {
		t.Fatalf("no revoke link:\n%s", page)
	}
	// The link asks first, naming the key; only the form it shows revokes.
	code, _, page = s.get("/app/keys/" + ids[1] + "/revoke")
	if code != 200 || !strings.Contains(page, "Revoke the key <strong>ci</strong>?") {
		t.Fatalf("expected the revoke asked on a page naming the key, got %d:\n%s", code, page)
	}
	if r := s.hub.Call("GET", "/v1/api/projects", key, nil); r.Status != 200 {
		t.Fatalf("expected the key still working while the revoke is only asked, got %d", r.Status)
	}
	code, path, page = s.post("/app/keys/"+ids[1]+"/revoke", url.Values{"csrf": {csrfOf(t, page)}})
	if code != 200 || path != "/app/keys" || !regexp.MustCompile(`<td>ci</td>(?s:.*?)revoked `).MatchString(page) {
		t.Fatalf("expected the key revoked, got %d at %s:\n%s", code, path, page)
	}
	if r := s.hub.Call("GET", "/v1/api/projects", key, nil); r.Status != 401 {
		t.Fatalf("expected the revoked key refused at once, got %d", r.Status)
	}
}

func TestAFormWithoutItsCSRFTokenIsRefused(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page := s.signIn("ada-1")
	for _, form := range []url.Values{{"name": {"sneaky"}}, {"name": {"sneaky"}, "csrf": {"not-the-token"}}} {
		if code, _, body := s.post("/app/keys", form); code != 403 || !strings.Contains(body, "did not come from this page") {
			t.Errorf("expected a form without its token refused with 403, got %d:\n%s", code, body)
		}
	}
	// Another site's form, even with the token, is refused by what the browser says.
	if code, _, _ := s.postWith("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {"x"}}, "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Errorf("expected a cross-site form refused, got %d", code)
	}
	keys, err := s.hub.Service.Admin.ListAPIKeys(context.Background(), s.hub.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "sneaky" || k.Name == "x" {
			t.Errorf("a refused form made a key: %+v", k)
		}
	}
}

// The token travels in the form's body or a header, never in the address: a URL is
// copied into logs, histories and Referer headers.
func TestTheCSRFTokenIsTakenFromTheBodyOrAHeaderOnly(t *testing.T) {
	s, csrf := ownerSignedIn(t)
	for _, tc := range []struct {
		name, query string
		headers     []string
		form        url.Values
		want        int
	}{
		{"in the query string", "?csrf=" + url.QueryEscape(csrf), nil, url.Values{"name": {"by-query"}}, 403},
		{"in the query, a wrong one in the body", "?csrf=" + url.QueryEscape(csrf), nil, url.Values{"name": {"by-query2"}, "csrf": {"nope"}}, 403},
		{"in the X-CSRF-Token header", "", []string{"X-CSRF-Token", csrf}, url.Values{"name": {"by-header"}}, 201},
		{"in the body", "", nil, url.Values{"name": {"by-body"}, "csrf": {csrf}}, 201},
	} {
		if code, _, body := s.postWith("/app/keys"+tc.query, tc.form, tc.headers...); code != tc.want {
			t.Errorf("the token %s: expected %d, got %d (%s)", tc.name, tc.want, code, noticeOf(body))
		}
	}
	keys, err := s.hub.Service.Admin.ListAPIKeys(context.Background(), s.hub.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k.Name, "by-query") {
			t.Errorf("a token in the query string made a key: %+v", k)
		}
	}
}

// A NUL character or bytes that are not UTF-8, anywhere in what a page is sent, are
// refused in words with 400: never a 500 from the store.
func TestFormsRefuseNULAndInvalidUTF8InWords(t *testing.T) {
	s, csrf := ownerSignedIn(t)
	for _, tc := range []struct {
		name, path string
		form       url.Values // nil: a GET
		want       string
	}{
		{"a key's name with a NUL", "/app/keys", url.Values{"name": {"a\x00b"}}, "NUL character"},
		{"a key's name not UTF-8", "/app/keys", url.Values{"name": {"a\xffb"}}, "not valid UTF-8"},
		{"an invited email with a NUL", "/app/members", url.Values{"email": {"a\x00b@example.com"}, "role": {"member"}}, "NUL character"},
		{"a webhook's description with a NUL", "/app/webhooks", url.Values{"url": {"https://hooks.example.com/"}, "description": {"a\x00"}}, "NUL character"},
		{"a prompt not UTF-8", "/app/workspaces", url.Values{"prompt": {"fix \xc3"}, "agent": {"agent_1"}, "model": {"m"}}, "not valid UTF-8"},
		{"a field's name with a NUL", "/app/keys", url.Values{"name": {"x"}, "n\x00": {"y"}}, "NUL character"},
		{"a query with a NUL", "/app/workspaces?state=%00", nil, "NUL character"},
		{"a key id with a NUL", "/app/keys/key_%00/revoke", url.Values{}, "NUL character"},
		{"an audit page not UTF-8", "/app/audit?before=%ff", nil, "not valid UTF-8"},
	} {
		var code int
		var body string
		if tc.form == nil {
			code, _, body = s.get(tc.path)
		} else {
			tc.form.Set("csrf", csrf)
			code, _, body = s.post(tc.path, tc.form)
		}
		if code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: expected 400 saying %q, got %d (%s)", tc.name, tc.want, code, noticeOf(body))
		}
	}
}

func TestAMemberCannotReachTheKeysPage(t *testing.T) {
	s := newSite(t)
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	code, path, page := s.signIn("bob-1")
	if code != 200 || path != "/app/workspaces" || !strings.Contains(page, "Workspaces of this account") {
		t.Fatalf("expected a member on the workspaces, got %d at %s:\n%s", code, path, page)
	}
	if strings.Contains(page, `href="/app/keys"`) {
		t.Errorf("a member's page links to the keys:\n%s", page)
	}
	if code, _, body := s.get("/app/keys"); code != 403 || !strings.Contains(body, "only the account") {
		t.Errorf("expected the keys page refused to a member, got %d:\n%s", code, body)
	}
	if code, _, _ := s.post("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {"mine"}}); code != 403 {
		t.Errorf("expected a member's key creation refused, got %d", code)
	}
}

func TestAPersonNoAccountHasIsRefusedInWords(t *testing.T) {
	s := newSite(t)
	s.person("eve-1", "eve@example.com", "Eve", "")
	code, _, page := s.signIn("eve-1")
	if code != 403 || !strings.Contains(page, "not a member of any account") {
		t.Fatalf("expected a stranger refused, got %d:\n%s", code, page)
	}
	if code, path, _ := s.get("/app/keys"); code != 200 || path != "/app/signin" {
		t.Errorf("expected no session after a refused sign-in, got %d at %s", code, path)
	}
}

// Slack's OpenID Connect names the person's team and user in its own claims: a person
// of a bound team who signs in joins the bound account as a member.
func TestSlacksClaimsLandThePersonInTheBoundAccount(t *testing.T) {
	s := newSlackSite(t)
	if err := s.hub.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack,
		TeamID: "T0BOUND", AccountID: s.hub.Account.ID}); err != nil {
		t.Fatal(err)
	}
	s.idp.AddUser(oidctest.User{Subject: "U0SLACK", Name: "Sam", Email: "sam@example.com", Extra: map[string]any{
		"https://slack.com/team_id": "T0BOUND", "https://slack.com/user_id": "U0SLACK"}})
	s.idp.AddUser(oidctest.User{Subject: "U0OTHER", Name: "Oz", Extra: map[string]any{
		"https://slack.com/team_id": "T0UNBOUND", "https://slack.com/user_id": "U0OTHER"}})
	code, path, page := s.signIn("U0SLACK")
	if code != 200 || path != "/app/workspaces" || !strings.Contains(page, "Sam · member of "+s.hub.Account.Name) {
		t.Fatalf("expected Sam in the bound account as a member, got %d at %s:\n%s", code, path, page)
	}
	list, err := s.hub.Service.Admin.ListMembers(context.Background(), s.hub.Account.ID)
	if err != nil || len(list) != 1 || list[0].Member.Identities[0] != (core.Identity{Kind: core.IdentitySlack, Subject: "T0BOUND:U0SLACK"}) {
		t.Fatalf("expected Sam recorded by his Slack identity, got %+v (%v)", list, err)
	}
	other := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t)}
	if code, _, _ := other.signIn("U0OTHER"); code != 403 {
		t.Errorf("expected a person of an unbound team refused, got %d", code)
	}
}

// Slack's claims are believed from Slack's issuer only: another provider's ID token
// naming a bound team and a Slack user links no Slack identity, nor joins the team's
// account.
func TestSlackClaimsFromAnotherIssuerAreNotBelieved(t *testing.T) {
	s := newSite(t)
	if err := s.hub.Service.Admin.BindChat(context.Background(), &core.ChatBinding{Platform: core.PlatformSlack,
		TeamID: "T0BOUND", AccountID: s.hub.Account.ID}); err != nil {
		t.Fatal(err)
	}
	slack := map[string]any{"https://slack.com/team_id": "T0BOUND", "https://slack.com/user_id": "U0SLACK"}
	s.idp.AddUser(oidctest.User{Subject: "mallory", Name: "Mallory", Extra: slack})
	if code, _, page := s.signIn("mallory"); code != 403 || !strings.Contains(page, "not a member of any account") {
		t.Errorf("expected a stranger with Slack-looking claims refused, got %d (%s)", code, noticeOf(page))
	}
	// A member the operator named by email signs in with the same claims: in by their
	// email, and still no Slack identity.
	s.person("ada-1", "ada@example.com", "Ada", core.RoleMember)
	s.idp.AddUser(oidctest.User{Subject: "ada-1", Email: "ada@example.com", Name: "Ada", Extra: slack})
	other := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t)}
	if code, path, _ := other.signIn("ada-1"); code != 200 || path != "/app/workspaces" {
		t.Fatalf("expected Ada signed in by her email, got %d at %s", code, path)
	}
	list, err := s.hub.Service.Admin.ListMembers(context.Background(), s.hub.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ms := range list {
		for _, id := range ms.Member.Identities {
			if id.Kind == core.IdentitySlack {
				t.Errorf("a Slack identity was linked from another issuer's claims: %+v", ms.Member)
			}
		}
	}
	if len(list) != 1 {
		t.Errorf("expected Ada alone in the account, got %d members", len(list))
	}
}

func TestASessionEndsAtSignOutAndWhenIdle(t *testing.T) {
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.AppSessionIdle = 30 * time.Minute }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page := s.signIn("ada-1")
	if code, path, _ := s.post("/app/signout", url.Values{"csrf": {csrfOf(t, page)}}); code != 200 || path != "/app/signin" {
		t.Fatalf("expected sign-out to land on the sign-in page, got %d at %s", code, path)
	}
	if _, path, _ := s.get("/app/keys"); path != "/app/signin" {
		t.Fatalf("expected the session ended by sign-out, got %s", path)
	}

	s.signIn("ada-1")
	s.clock.Advance(29 * time.Minute) // in use within the idle limit: kept, and touched
	if _, path, _ := s.get("/app/keys"); path != "/app/keys" {
		t.Fatalf("expected the session alive within its idle limit, got %s", path)
	}
	s.clock.Advance(29 * time.Minute)
	if _, path, _ := s.get("/app/keys"); path != "/app/keys" {
		t.Fatalf("expected the last request to have renewed the idle limit, got %s", path)
	}
	s.clock.Advance(31 * time.Minute)
	if _, path, _ := s.get("/app/keys"); path != "/app/signin" {
		t.Fatalf("expected the session ended after 31 idle minutes, got %s", path)
	}
}

func TestValuesPeopleTypedRenderAsText(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", `Ada"><img src=x onerror=alert(1)>`, core.RoleOwner)
	_, _, page := s.signIn("ada-1")
	hostile := `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	_, _, created := s.post("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {hostile}})
	_, _, page = s.get("/app/keys")
	for _, p := range []string{created, page} {
		if strings.Contains(p, "<script>alert") || strings.Contains(p, "<img src=x") {
			t.Fatalf("a typed value reached the page as markup:\n%s", p)
		}
	}
	if !strings.Contains(html.UnescapeString(page), hostile) {
		t.Errorf("expected the key's name shown as text:\n%s", page)
	}
}

// The production cookie and headers, checked on the wire (a one-time link signs in).
func TestTheCookieAndHeadersAreAsStrictAsABrowserAllows(t *testing.T) {
	h := hubtest.Start(t)
	id, _ := core.NewIdentity(core.IdentityEmail, "owner@example.com")
	if _, err := h.Service.Admin.AddMember(context.Background(), h.Account.ID, id, core.RoleOwner, "Owner"); err != nil {
		t.Fatal(err)
	}
	link, err := h.Service.Admin.SignInLink(context.Background(), h.Account.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	token := link.Token
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(h.URL + "/app/signin/link?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{"__Host-wshub_session=wss_", "path=/", "HttpOnly", "secure", "SameSite=Lax"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("expected %q in the session cookie, got %q", want, cookie)
		}
	}
	if strings.Contains(strings.ToLower(cookie), "domain=") {
		t.Errorf("a __Host- cookie names no domain: %q", cookie)
	}
	if res.StatusCode != 303 || res.Header.Get("Location") != "/app/" {
		t.Errorf("expected the link to open the app, got %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	for header, want := range map[string]string{
		"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "same-origin",
		"X-Content-Type-Options":  "nosniff",
	} {
		if got := res.Header.Get(header); !strings.Contains(got, want) {
			t.Errorf("expected %s to hold %q, got %q", header, want, got)
		}
	}
	if !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("expected the pages never framed: %q", res.Header.Get("Content-Security-Policy"))
	}
	// Once only.
	res, err = noFollow.Get(h.URL + "/app/signin/link?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := read(t, res); code != 403 || !strings.Contains(body, "used or has expired") {
		t.Errorf("expected a used link refused, got %d:\n%s", code, body)
	}
	// The API stays bearer-only: the app's cookie is no key.
	req, _ := http.NewRequest("GET", h.URL+"/v1/api/projects", nil)
	req.AddCookie(&http.Cookie{Name: "__Host-wshub_session", Value: "wss_whatever"})
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := read(t, res); code != 401 {
		t.Errorf("expected the API to ignore the app's cookie, got %d", code)
	}
}

// A sign-in link the operator did not make signs no one in: a made-up token is
// refused in words and sets no cookie.
func TestAnUnknownSignInLinkIsRefused(t *testing.T) {
	h := hubtest.Start(t)
	res, err := http.Get(h.URL + "/app/signin/link?token=wss_madeup")
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := read(t, res)
	if code != 403 || !strings.Contains(body, "used or has expired") || len(res.Cookies()) != 0 {
		t.Errorf("expected a made-up link refused without a cookie, got %d %v:\n%s", code, res.Cookies(), body)
	}
}

// memberIDOf finds the member id of the row naming who on the members page.
func memberIDOf(t *testing.T, page, who string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(who) + `(?s:.*?)action="/app/members/(mem_[0-9A-Za-z]+)/role"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no row for %s on the members page:\n%s", who, page)
	}
	return m[1]
}

func TestOwnersManageMembersAndTheLogSaysWhoDidWhat(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.person("bob-1", "bob@example.com", "Bob", "") // known to the provider only
	_, _, page := s.signIn("ada-1")
	csrf := csrfOf(t, page)

	if code, path, page := s.post("/app/members", url.Values{"csrf": {csrf}, "email": {"Bob@Example.com"}, "role": {"member"}}); code != 200 ||
		path != "/app/members" || !strings.Contains(page, "<td>bob@example.com</td>") {
		t.Fatalf("expected Bob invited, got %d at %s:\n%s", code, path, page)
	}
	bob := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t)}
	code, path, page := bob.signIn("bob-1")
	if code != 200 || path != "/app/invitations" {
		t.Fatalf("expected the invited Bob signed in by his verified email to answer, got %d at %s", code, path)
	}
	if code, path, _ := bob.post(acceptOf(t, page), url.Values{"csrf": {csrfOf(t, page)}}); code != 200 || path != "/app/workspaces" {
		t.Fatalf("expected Bob in the account once he accepted, got %d at %s", code, path)
	}

	_, _, page = s.get("/app/members")
	bobID, adaID := memberIDOf(t, page, "bob@example.com"), memberIDOf(t, page, "ada@example.com")
	// The only owner cannot step down, nor leave.
	for _, path := range []string{"/app/members/" + adaID + "/role", "/app/members/" + adaID + "/remove"} {
		if code, _, body := s.post(path, url.Values{"csrf": {csrf}, "role": {"member"}}); code != 400 || !strings.Contains(body, "keeps at least one owner") {
			t.Errorf("POST %s: expected the last owner kept, got %d:\n%s", path, code, body)
		}
	}
	if code, _, _ := s.post("/app/members/"+bobID+"/role", url.Values{"csrf": {csrf}, "role": {"owner"}}); code != 200 {
		t.Fatalf("expected Bob made owner, got %d", code)
	}
	if _, path, _ := bob.get("/app/keys"); path != "/app/keys" {
		t.Fatalf("expected Bob, now owner, on the keys page at once, got %s", path)
	}
	if code, _, _ := s.post("/app/members/"+bobID+"/end-sessions", url.Values{"csrf": {csrf}}); code != 200 {
		t.Fatalf("expected Bob's sessions ended, got %d", code)
	}
	if _, path, _ := bob.get("/app/keys"); path != "/app/signin" {
		t.Fatalf("expected Bob signed out everywhere, got %s", path)
	}
	bob.signIn("bob-1")
	if code, _, confirm := s.get("/app/members/" + bobID + "/remove"); code != 200 || !strings.Contains(confirm, "from this account?") ||
		!strings.Contains(confirm, `action="/app/members/`+bobID+`/remove"`) {
		t.Fatalf("expected removing Bob to ask first, got %d:\n%s", code, confirm)
	}
	if code, _, _ := s.post("/app/members/"+bobID+"/remove", url.Values{"csrf": {csrf}}); code != 200 {
		t.Fatalf("expected Bob removed, got %d", code)
	}
	if _, path, _ := bob.get("/app/"); path != "/app/signin" {
		t.Fatalf("expected a removed member's session to end at once, got %s", path)
	}

	code, _, page = s.get("/app/audit")
	if code != 200 {
		t.Fatalf("audit page: %d", code)
	}
	for _, want := range []string{"member.invited", "member.added", "member.role_changed", "member.sessions_ended", "member.removed", `<td data-label="Who">Ada</td>`, "127.0.0.1"} {
		if !strings.Contains(page, want) {
			t.Errorf("expected %q in the audit log:\n%s", want, page)
		}
	}
	// Operator actions are there too, without an address.
	if _, _, err := s.hub.Service.Admin.CreateAPIKey(context.Background(), s.hub.Account.ID, "from-the-shell"); err != nil {
		t.Fatal(err)
	}
	if _, _, page := s.get("/app/audit"); !strings.Contains(page, `<td data-label="Who">operator</td>`) || !strings.Contains(page, "from-the-shell") {
		t.Errorf("expected the operator's key in the log:\n%s", page)
	}
	// A member reads neither page.
	s.person("cy-1", "cy@example.com", "Cy", core.RoleMember)
	cy := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t)}
	cy.signIn("cy-1")
	for _, path := range []string{"/app/members", "/app/audit"} {
		if code, _, _ := cy.get(path); code != 403 {
			t.Errorf("expected %s refused to a member, got %d", path, code)
		}
	}
}

var answerForm = regexp.MustCompile(`action="(/app/invitations/inv_[0-9A-Za-z]+/)accept"`)

// acceptOf is the path of the first invitation's Accept on an invitations page.
func acceptOf(t *testing.T, page string) string {
	t.Helper()
	m := answerForm.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no invitation to answer on the page:\n%s", page)
	}
	return m[1] + "accept"
}

// An owner who invites an address sees that address, and nothing of a person the hub
// knows by it (their name, their identities, another account's Slack id), until that
// person signs in and accepts; one who declines never shows.
func TestAnInvitationShowsTheAddressOnlyUntilItsPersonAccepts(t *testing.T) {
	ctx := context.Background()
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	// Bea owns another account, and is known there by her email and her Slack id.
	other, _ := s.hub.NewAccount(true)
	s.idp.AddUser(oidctest.User{Subject: "bea-1", Email: "bea@example.com", Name: "Bea Private"})
	email, _ := core.NewIdentity(core.IdentityEmail, "bea@example.com")
	ms, err := s.hub.Service.Admin.AddMember(ctx, other.ID, email, core.RoleOwner, "Bea Private")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.hub.Store.AddIdentity(ctx, ms.Member.ID, core.Identity{Kind: core.IdentitySlack, Subject: "T0OTHER:U0BEA"}); err != nil {
		t.Fatal(err)
	}
	s.idp.AddUser(oidctest.User{Subject: "cy-1", Email: "cy@example.com", Name: "Cy"}) // known to no account
	_, _, page := s.signIn("ada-1")
	csrf := csrfOf(t, page)
	for _, who := range []string{"bea@example.com", "cy@example.com"} {
		if code, _, _ := s.post("/app/members", url.Values{"csrf": {csrf}, "email": {who}, "role": {"member"}}); code != 200 {
			t.Fatalf("expected %s invited, got %d", who, code)
		}
	}
	seen := func(when string, want, not []string) {
		t.Helper()
		_, _, page := s.get("/app/members")
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: expected %q on the members page", when, w)
			}
		}
		for _, n := range not {
			if strings.Contains(page, n) {
				t.Errorf("%s: %q shows on the members page", when, n)
			}
		}
	}
	private := []string{"Bea Private", "U0BEA", "bea-1", ms.Member.ID, "Cy<"}
	seen("invited", []string{"<td>bea@example.com</td>", "<td>cy@example.com</td>"}, private)
	if list, err := s.hub.Service.Admin.ListMembers(ctx, s.hub.Account.ID); err != nil || len(list) != 1 {
		t.Fatalf("expected Ada alone in the account before any answer, got %d (%v)", len(list), err)
	}

	// Cy, in no account, signs in to answer, and can open nothing else; she declines.
	cy := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t)}
	code, path, page := cy.signIn("cy-1")
	if code != 200 || path != "/app/invitations" || !strings.Contains(page, "in no account yet") {
		t.Fatalf("expected Cy on her invitations, got %d at %s (%s)", code, path, noticeOf(page))
	}
	if _, path, _ := cy.get("/app/workspaces"); path != "/app/invitations" {
		t.Errorf("expected a person in no account kept to her invitations, got %s", path)
	}
	decline := strings.TrimSuffix(acceptOf(t, page), "accept") + "decline"
	if _, _, page := cy.post(decline, url.Values{"csrf": {csrfOf(t, page)}}); !strings.Contains(page, "No invitations wait for you") {
		t.Errorf("expected no invitation left for Cy:\n%s", page)
	}

	// Bea signs in to her own account and sees the invitation there.
	bea := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t)}
	if code, path, page := bea.signIn("bea-1"); code != 200 || path != "/app/workspaces" || !strings.Contains(page, "owner of "+other.Name+"</span>") ||
		!strings.Contains(page, "Invitations (1)") {
		t.Fatalf("expected Bea in her account, told of one invitation, got %d at %s:\n%s", code, path, page)
	}
	seen("signed in, not answered", []string{"<td>bea@example.com</td>"}, private)
	_, _, page = bea.get("/app/invitations")
	if code, path, page := bea.post(acceptOf(t, page), url.Values{"csrf": {csrfOf(t, page)}}); code != 200 || path != "/app/workspaces" ||
		!strings.Contains(page, "member of "+s.hub.Account.Name+"</span>") {
		t.Fatalf("expected Bea in Ada's account once she accepted, got %d at %s (%s)", code, path, noticeOf(page))
	}
	seen("accepted", []string{"Bea Private"}, []string{"<td>bea@example.com</td>", "cy@example.com"})
	if _, _, page := s.get("/app/audit"); !strings.Contains(page, "member.invitation_declined") || !strings.Contains(page, "member.added") ||
		strings.Contains(page, "<td>Cy</td>") {
		t.Errorf("expected the decline, by the address alone, and the acceptance in the audit log:\n%s", page)
	}
}

func TestAPersonInTwoAccountsSwitchesBetweenThem(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	other, _ := s.hub.NewAccount(true)
	id, _ := core.NewIdentity(core.IdentityEmail, "ada@example.com")
	if _, err := s.hub.Service.Admin.AddMember(context.Background(), other.ID, id, core.RoleMember, ""); err != nil {
		t.Fatal(err)
	}
	_, _, page := s.signIn("ada-1")
	if !strings.Contains(page, `<option value="`+other.ID+`"`) {
		t.Fatalf("expected the switcher to offer the second account:\n%s", page)
	}
	code, path, page := s.post("/app/switch", url.Values{"csrf": {csrfOf(t, page)}, "account": {other.ID}})
	if code != 200 || path != "/app/workspaces" || !strings.Contains(page, "member of "+other.Name+"</span>") {
		t.Fatalf("expected Ada in the second account as a member, got %d at %s:\n%s", code, path, page)
	}
	if code, _, _ := s.post("/app/switch", url.Values{"csrf": {csrfOf(t, page)}, "account": {"acct_notmine"}}); code != 404 {
		t.Errorf("expected a switch to a stranger's account refused, got %d", code)
	}
}

func TestOwnersAddAWebhookSeeItsSecretOnceAndDeleteIt(t *testing.T) {
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure = true }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	rc := hubtest.NewReceiver(t, nil)
	_, _, page := s.signIn("ada-1")
	csrf := csrfOf(t, page)
	hostile := `ci <script>alert(1)</script>"><img src=x onerror=alert(2)>`
	code, _, page := s.post("/app/webhooks", url.Values{"csrf": {csrf}, "url": {rc.URL}, "description": {hostile}})
	secret := regexp.MustCompile(`value="(whsec_[0-9A-Za-z_-]+)"`).FindStringSubmatch(page)
	if code != 201 || secret == nil || !strings.Contains(page, "you will not see it again") {
		t.Fatalf("expected the endpoint's secret shown once, got %d:\n%s", code, page)
	}
	_, _, page = s.get("/app/webhooks")
	if strings.Contains(page, secret[1]) || strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") ||
		!strings.Contains(html.UnescapeString(page), hostile) {
		t.Fatalf("expected the endpoint listed, its description as text and no secret:\n%s", page)
	}
	// The API sees the same endpoint.
	if r := s.hub.Call("GET", "/v1/api/webhooks", s.hub.Key, nil); r.Status != 200 || !strings.Contains(string(r.Raw), rc.URL) {
		t.Fatalf("expected the API to list the app's endpoint, got %d %s", r.Status, r.Raw)
	}
	if code, _, body := s.post("/app/webhooks", url.Values{"csrf": {csrf}, "url": {"ftp://nowhere"}}); code != 400 || !strings.Contains(body, "notice") {
		t.Errorf("expected a bad URL refused in words, got %d", code)
	}
	id := regexp.MustCompile(`href="/app/webhooks/(wh_[0-9A-Za-z]+)/delete"`).FindStringSubmatch(page)
	if id == nil || !strings.Contains(page, `href="/app/webhooks/`+id[1]+`/deliveries"`) {
		t.Fatalf("no Delete… or Deliveries link:\n%s", page)
	}
	// Delete asks first, on a page of its own that works without JavaScript.
	if code, _, confirm := s.get("/app/webhooks/" + id[1] + "/delete"); code != 200 || !strings.Contains(confirm, "Delete the endpoint "+rc.URL+"?") ||
		!strings.Contains(confirm, `action="/app/webhooks/`+id[1]+`/delete"`) || !strings.Contains(confirm, `<a href="/app/webhooks">Keep it</a>`) {
		t.Fatalf("expected a confirm page naming the endpoint, got %d:\n%s", code, confirm)
	}
	if code, _, _ := s.get("/app/webhooks/wh_0000000000000000/delete"); code != 404 {
		t.Errorf("expected an unknown endpoint's confirm page to be 404, got %d", code)
	}
	if code, _, page := s.post("/app/webhooks/"+id[1]+"/delete", url.Values{"csrf": {csrf}}); code != 200 || !strings.Contains(page, "No endpoints yet.") {
		t.Fatalf("expected the endpoint deleted, got %d:\n%s", code, page)
	}
	if _, _, page := s.get("/app/audit"); !strings.Contains(page, "webhook.created") || !strings.Contains(page, "webhook.deleted") {
		t.Errorf("expected the endpoint's creation and deletion in the audit log:\n%s", page)
	}
}

func TestAnOversizedFormIsRefusedBeforeItIsRead(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page := s.signIn("ada-1")
	big := url.Values{"csrf": {csrfOf(t, page)}, "name": {strings.Repeat("x", web.MaxFormBytes)}}
	if code, _, _ := s.post("/app/keys", big); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("expected a form past %d bytes refused with 413, got %d", web.MaxFormBytes, code)
	}
}

// pageUntil reads a page until it holds want (the hub settles what the receiver got a
// moment after), failing after a deadline.
func (s *site) pageUntil(path, want string) string {
	s.t.Helper()
	return s.pageWithin(30*time.Second, path, want)
}

// pageWithin reads a page until it holds want, failing with the last read after within.
func (s *site) pageWithin(within time.Duration, path, want string) string {
	s.t.Helper()
	return eventually.Value(s.t, within, fmt.Sprintf("%q on %s", want, path), func() (string, error) {
		_, _, page := s.get(path)
		if !strings.Contains(page, want) {
			return page, fmt.Errorf("got:\n%s", page)
		}
		return page, nil
	})
}

func TestOwnersReadAnEndpointsDeliveriesAndRedeliver(t *testing.T) {
	s := newSite(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure, c.WebhookPoll = true, 50*time.Millisecond }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, _ hubtest.Received) {
		w.WriteHeader(200)
		_, _ = io.WriteString(w, `{"seen":"<b>yes</b>"}`)
	})
	_, _, page := s.signIn("ada-1")
	csrf := csrfOf(t, page)
	_, _, page = s.post("/app/webhooks", url.Values{"csrf": {csrf}, "url": {rc.URL}})
	id := regexp.MustCompile(`href="/app/webhooks/(wh_[0-9A-Za-z]+)/deliveries"`).FindStringSubmatch(page)
	if id == nil {
		t.Fatalf("no link to the endpoint's deliveries:\n%s", page)
	}
	logPath := "/app/webhooks/" + id[1] + "/deliveries"
	if _, _, page := s.get(logPath); !strings.Contains(page, "No deliveries yet.") {
		t.Fatalf("expected an empty log:\n%s", page)
	}
	ws := s.hub.Call("POST", "/v1/api/workspaces", s.hub.Key, map[string]any{"agent": "agent_1", "model": "test-model", "prompt": "hi"}).
		Expect(t, 201, "").Body["workspace"].(map[string]any)["workspaceId"].(string)
	rc.Wait(t, 1)
	page = s.pageUntil(logPath, "delivered after 1 of")
	if !strings.Contains(page, "workspace.turn.completed") || !strings.Contains(page, `<td data-label="Status">200</td>`) ||
		!strings.Contains(page, `{&#34;seen&#34;:&#34;&lt;b&gt;yes&lt;/b&gt;&#34;}`) {
		t.Fatalf("expected the attempt with its status and the answer as text:\n%s", page)
	}
	// The log names its endpoint, and each event's workspace by its title, linked.
	if !strings.Contains(page, "<h1>Deliveries to "+rc.URL+"</h1>") || !strings.Contains(page, `<p class="workspace">Workspace: <a href="/app/workspaces/`+ws+`">hi</a>`) {
		t.Fatalf("expected the endpoint named and the workspace linked by its title:\n%s", page)
	}
	redeliver := regexp.MustCompile(`action="(/app/webhooks/wh_[0-9A-Za-z]+/deliveries/[^/"]+/redeliver)"`).FindStringSubmatch(page)
	if redeliver == nil {
		t.Fatalf("no redeliver form:\n%s", page)
	}
	if code, path, _ := s.post(redeliver[1], url.Values{"csrf": {csrfOf(t, page)}}); code != 200 || path != logPath {
		t.Fatalf("expected redeliver to return to the log, got %d at %s", code, path)
	}
	rc.Wait(t, 2)
	page = s.pageUntil(logPath, "delivered after 2 of")
	if strings.Contains(page, "not shown") {
		t.Fatalf("expected every attempt of two shown:\n%s", page)
	}
	// Redelivered past the log's 20 attempts: the newest 20, and a line for the rest.
	for n := 3; n <= 22; n++ {
		s.post(redeliver[1], url.Values{"csrf": {csrfOf(t, page)}})
		page = s.pageUntil(logPath, fmt.Sprintf("delivered after %d of", n))
	}
	rows := regexp.MustCompile(`<tr>\s*<td data-label="Attempt">(\d+)</td>`).FindAllStringSubmatch(page, -1)
	if !strings.Contains(page, "2 earlier attempts not shown.") || len(rows) != 20 || rows[0][1] != "3" || rows[19][1] != "22" {
		t.Fatalf("expected attempts 3 to 22 after a line saying 2 earlier are not shown, got %d rows:\n%s", len(rows), page)
	}
	// Another account's endpoint is not found from this one.
	if code, _, _ := s.get("/app/webhooks/wh_0000000000000000/deliveries"); code != 404 {
		t.Errorf("expected an unknown endpoint's log not found, got %d", code)
	}
}

// The audit log's address is the client's: behind a trusted proxy, the one its
// X-Forwarded-For names; from anyone else, the peer's, whatever the header claims.
func TestTheAuditLogNamesTheClientBehindATrustedProxyOnly(t *testing.T) {
	for _, tt := range []struct {
		trusted []string
		want    string
	}{{nil, "127.0.0.1"}, {[]string{"127.0.0.1"}, "203.0.113.9"}} {
		s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.TrustedProxies = tt.trusted }))
		s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
		_, _, page := s.signIn("ada-1")
		req, _ := http.NewRequest("POST", s.hub.URL+"/app/keys", strings.NewReader(url.Values{"csrf": {csrfOf(t, page)}, "name": {"proxied"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", "203.0.113.9")
		res, err := s.web.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if code, _, _ := read(t, res); code != 201 {
			t.Fatalf("expected the key created, got %d", code)
		}
		if _, _, page := s.get("/app/audit"); !regexp.MustCompile(`proxied \(full access\)</td>\s*<td data-label="From">` + regexp.QuoteMeta(tt.want) + `</td>`).MatchString(page) {
			t.Errorf("trusting %v: expected the entry from %s:\n%s", tt.trusted, tt.want, page)
		}
	}
}

// Sessions and sign-in links long past their end are pruned by the retention sweep;
// a live session is not.
func TestTheRetentionSweepPrunesSessionsAndLinksLongPastTheirEnd(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	ctx := context.Background()
	s.signIn("ada-1") // a session that ends by itself after DefaultAppMax
	ms, err := s.hub.Service.Admin.ListMembers(ctx, s.hub.Account.ID)
	if err != nil || len(ms) != 1 {
		t.Fatalf("members: %v %v", ms, err)
	}
	if _, err := s.hub.Service.Admin.SignInLink(ctx, s.hub.Account.ID, ms[0].Member.Identities[0]); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(core.DefaultAppMax + core.MinRetention + time.Hour)
	fresh := &site{t: t, hub: s.hub, idp: s.idp, web: browserClient(t), clock: s.clock}
	if _, path, _ := fresh.signIn("ada-1"); path != "/app/workspaces" {
		t.Fatalf("expected a fresh sign-in, got %s", path)
	}
	p, err := s.hub.Service.Sweeps.SweepRetention(ctx, core.MinRetention, s.clock.Now().Truncate(time.Hour))
	if err != nil || p.AppSessions != 1 || p.SignInLinks != 1 {
		t.Fatalf("expected the old session and link pruned, got %+v (%v)", p, err)
	}
	if _, path, _ := fresh.get("/app/keys"); path != "/app/keys" {
		t.Errorf("expected the fresh session kept, got %s", path)
	}
}
