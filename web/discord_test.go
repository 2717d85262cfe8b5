package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// fakeDiscord speaks the part of Discord's wire the app's sign-in uses: the OAuth2
// consent (approved at once for the user the test chose), the token exchange with
// PKCE, and the person's user, servers and roles in a server.
type fakeDiscord struct {
	srv *httptest.Server
	mu  sync.Mutex
	// user is who the next consent signs in; guilds their servers and roles in each.
	user      map[string]any
	guilds    map[string][]string
	codes     map[string]string // code -> its PKCE challenge
	asked     []string          // the servers whose member (roles) was read
	clientID  string
	secret    string
	exchanged int
}

func startFakeDiscord(t *testing.T) *fakeDiscord {
	f := &fakeDiscord{codes: map[string]string{}, clientID: "1100000000000000001", secret: "discord-secret"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth2/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != f.clientID || q.Get("code_challenge_method") != "S256" ||
			q.Get("scope") != "identify guilds guilds.members.read" {
			http.Error(w, "bad authorize request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		code := "code-" + q.Get("state")
		f.codes[code] = q.Get("code_challenge")
		f.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /api/v9/oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		f.mu.Lock()
		challenge, ok := f.codes[r.FormValue("code")]
		delete(f.codes, r.FormValue("code"))
		f.exchanged++
		f.mu.Unlock()
		sum := sha256.Sum256([]byte(r.FormValue("code_verifier")))
		if id != f.clientID || secret != f.secret || !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "user-token", "token_type": "Bearer", "expires_in": 3600,
			"scope": "identify guilds guilds.members.read"})
	})
	authed := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer user-token" {
				http.Error(w, `{"message": "401: Unauthorized", "code": 0}`, http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			h(w, r)
		}
	}
	mux.HandleFunc("GET /api/v9/users/@me", authed(func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(f.user)
	}))
	mux.HandleFunc("GET /api/v9/users/@me/guilds", authed(func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		list := []map[string]string{}
		for id := range f.guilds {
			list = append(list, map[string]string{"id": id, "name": "server " + id})
		}
		_ = json.NewEncoder(w).Encode(list)
	}))
	mux.HandleFunc("GET /api/v9/users/@me/guilds/{guild}/member", authed(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.asked = append(f.asked, r.PathValue("guild"))
		_ = json.NewEncoder(w).Encode(map[string]any{"roles": f.guilds[r.PathValue("guild")]})
	}))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDiscord) signInAs(id, name string, guilds map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.user = map[string]any{"id": id, "username": strings.ToLower(name), "global_name": name}
	f.guilds, f.asked = guilds, nil
}

// seen says which servers' roles were read, and how many codes were exchanged.
func (f *fakeDiscord) seen() (asked []string, exchanged int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...), f.exchanged
}

// client reaches the fake for every request to discord.com, as the real one would be
// reached, and any other host as it is.
func (f *fakeDiscord) client(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: toFake{host: strings.TrimPrefix(f.srv.URL, "http://")}}
}

type toFake struct{ host string }

func (t toFake) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == "discord.com" {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = "http", t.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Discord's OAuth2 signs a person in: one of a bound server who passes its role gate
// joins the bound account as a member; one who does not is refused.
func TestDiscordSignInJoinsTheBoundServersAccountThroughItsRoleGate(t *testing.T) {
	d := startFakeDiscord(t)
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) {
		c.DiscordAppID, c.DiscordClientSecret, c.DiscordHTTPClient, c.AppInsecure = d.clientID, d.secret, d.client(nil), true
	}))
	gated, open := h.Account, func() *core.Account { a, _ := h.NewAccount(true); return a }()
	for _, b := range []*core.ChatBinding{
		{Platform: core.PlatformDiscord, TeamID: "900000000000000001", AccountID: gated.ID, Roles: []string{"700000000000000007"}},
		{Platform: core.PlatformDiscord, TeamID: "900000000000000002", AccountID: open.ID},
	} {
		if err := h.Service.Admin.BindChat(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	browse := func() *site { return &site{t: t, hub: h, web: d.client(browserClient(t).Jar)} }

	// In the gated server with the role, and in the open one: a member of both.
	d.signInAs("300000000000000001", "Dana", map[string][]string{
		"900000000000000001": {"700000000000000007"}, "900000000000000002": nil, "900000000000000009": nil})
	s := browse()
	code, path, page := s.get("/app/signin/discord")
	if code != 200 || path != "/app/workspaces" || !strings.Contains(page, "Dana · member of") {
		t.Fatalf("expected Dana signed in as a member, got %d at %s:\n%s", code, path, page)
	}
	if asked, _ := d.seen(); strings.Join(asked, ",") != "900000000000000001" {
		t.Errorf("expected the roles read in the gated server only, got %v", asked)
	}
	for _, acct := range []*core.Account{gated, open} {
		list, err := h.Service.Admin.ListMembers(context.Background(), acct.ID)
		if err != nil || len(list) != 1 || list[0].Member.Identities[0] != (core.Identity{Kind: core.IdentityDiscord, Subject: "300000000000000001"}) {
			t.Errorf("expected Dana, by her Discord id, in %s, got %+v (%v)", acct.ID, list, err)
		}
	}

	// In the gated server without the role, and in no open one: refused.
	d.signInAs("300000000000000002", "Eli", map[string][]string{"900000000000000001": {"700000000000000008"}})
	if code, _, page := browse().get("/app/signin/discord"); code != 403 || !strings.Contains(page, "not a member of any account") {
		t.Errorf("expected Eli refused by the role gate, got %d:\n%s", code, page)
	}
	if list, _ := h.Service.Admin.ListMembers(context.Background(), gated.ID); len(list) != 1 {
		t.Errorf("expected Eli kept out, got %d members", len(list))
	}
	// A callback that did not start here is refused before Discord is asked.
	_, before := d.seen()
	if code, _, _ := browse().get("/app/signin/discord/callback?code=code-x&state=x"); code != 400 || func() bool { _, n := d.seen(); return n != before }() {
		t.Errorf("expected a forged callback refused without a code exchange, got %d", code)
	}
}
