package api_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/dnstest"
)

var (
	whSecretRE = regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	whIDRE     = regexp.MustCompile(`^wh_[A-Za-z0-9]{16}$`)
)

const whPath = "/v1/api/webhooks"

// whCreate registers url (and description when not nil) and expects 201.
func whCreate(t *testing.T, h *hubtest.Hub, key, u string, desc *string) (webhook map[string]any, secret string) {
	t.Helper()
	body := map[string]any{"url": u}
	if desc != nil {
		body["description"] = *desc
	}
	r := h.Call("POST", whPath, key, body).Expect(t, 201, "")
	webhook, ok := r.Body["webhook"].(map[string]any)
	if !ok {
		t.Fatalf("create webhook: no webhook object in %s", r.Raw)
	}
	secret, _ = r.Body["secret"].(string)
	if !whSecretRE.MatchString(secret) {
		t.Fatalf("create webhook: secret %q does not match %s", secret, whSecretRE)
	}
	return webhook, secret
}

// whList returns the listed webhooks and the raw body.
func whList(t *testing.T, h *hubtest.Hub, key string) ([]map[string]any, string) {
	t.Helper()
	r := h.Call("GET", whPath, key, nil).Expect(t, 200, "")
	raw, ok := r.Body["webhooks"].([]any)
	if !ok {
		t.Fatalf("list webhooks: webhooks is not an array: %s", r.Raw)
	}
	out := make([]map[string]any, len(raw))
	for i, w := range raw {
		out[i] = w.(map[string]any)
	}
	return out, string(r.Raw)
}

func strp(s string) *string { return &s }

func TestWebhookCreateListDelete(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	before := time.Now().Add(-time.Second).UnixMilli()

	w1, s1 := whCreate(t, h, h.Key, "https://hooks.example.com/a?x=1", strp("ci notifications"))
	w2, s2 := whCreate(t, h, h.Key, "https://hooks.example.org/b", nil)
	w3, s3 := whCreate(t, h, h.Key, "https://hooks.example.net/c", strp(""))
	after := time.Now().Add(time.Second).UnixMilli()
	if s1 == s2 || s2 == s3 || s1 == s3 {
		t.Fatal("two webhooks got the same secret")
	}

	for _, w := range []map[string]any{w1, w2, w3} {
		for k := range w {
			switch k {
			case "webhookId", "url", "description", "createdAt":
			default:
				t.Errorf("webhook object has undocumented field %q: %v", k, w)
			}
		}
		if id, _ := w["webhookId"].(string); !whIDRE.MatchString(id) {
			t.Errorf("webhookId %v does not match %s", w["webhookId"], whIDRE)
		}
		ms, ok := w["createdAt"].(float64)
		if !ok || int64(ms) < before || int64(ms) > after || ms != float64(int64(ms)) {
			t.Errorf("createdAt %v is not epoch milliseconds of now", w["createdAt"])
		}
	}
	if w1["url"] != "https://hooks.example.com/a?x=1" || w1["description"] != "ci notifications" {
		t.Errorf("webhook 1 = %v", w1)
	}
	if d, ok := w2["description"]; ok && d != "" {
		t.Errorf("webhook 2 description = %v, want absent", d)
	}
	if d, ok := w3["description"]; ok && d != "" {
		t.Errorf("webhook 3 description = %v, want absent or empty", d)
	}

	list, raw := whList(t, h, h.Key)
	if len(list) != 3 {
		t.Fatalf("list has %d webhooks, want 3: %s", len(list), raw)
	}
	for i, want := range []map[string]any{w1, w2, w3} {
		if fmt.Sprint(list[i]) != fmt.Sprint(want) {
			t.Errorf("list[%d] = %v, want %v (registration order, same object as create)", i, list[i], want)
		}
	}
	for _, s := range []string{s1, s2, s3, "whsec_", "secret", s1[len("whsec_"):]} {
		if strings.Contains(raw, s) {
			t.Errorf("list body contains %q: %s", s, raw)
		}
	}

	id1 := w1["webhookId"].(string)
	r := h.Call("DELETE", whPath+"/"+id1, h.Key, nil).Expect(t, 200, "")
	if string(r.Raw) != `{"ok":true}` {
		t.Errorf("delete body = %s, want {\"ok\":true}", r.Raw)
	}
	h.Call("DELETE", whPath+"/"+id1, h.Key, nil).Expect(t, 404, core.CodeWebhookNotFound)
	list, raw = whList(t, h, h.Key)
	if len(list) != 2 || list[0]["webhookId"] != w2["webhookId"] || list[1]["webhookId"] != w3["webhookId"] {
		t.Fatalf("after delete, list = %s", raw)
	}

	// Ids that name nothing, including ones no id can look like.
	for _, id := range []string{"wh_0000000000000000", "nope", "wh_" + strings.Repeat("x", 300), "%00", "%ff", "wh_%C3%A9", w2["webhookId"].(string) + "x"} {
		h.Call("DELETE", whPath+"/"+id, h.Key, nil).Expect(t, 404, core.CodeWebhookNotFound)
	}
	if list, raw = whList(t, h, h.Key); len(list) != 2 {
		t.Fatalf("failed deletes removed something: %s", raw)
	}
}

func TestWebhookEmptyListIsArray(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	if _, raw := whList(t, h, h.Key); raw != `{"webhooks":[]}` {
		t.Fatalf("empty list = %s, want {\"webhooks\":[]}", raw)
	}
}

func TestWebhookDeleteOtherAccount(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	_, otherKey := h.NewAccount(true)
	w, _ := whCreate(t, h, h.Key, "https://hooks.example.com/mine", nil)
	id := w["webhookId"].(string)

	h.Call("DELETE", whPath+"/"+id, otherKey, nil).Expect(t, 404, core.CodeWebhookNotFound)
	if list, raw := whList(t, h, otherKey); len(list) != 0 {
		t.Fatalf("another account lists my webhook: %s", raw)
	}
	if list, raw := whList(t, h, h.Key); len(list) != 1 || list[0]["webhookId"] != id {
		t.Fatalf("my webhook is gone after another account's delete: %s", raw)
	}
	h.Call("DELETE", whPath+"/"+id, h.Key, nil).Expect(t, 200, "")
}

// Delete webhook is the one endpoint api.md exempts from the entitlement check.
func TestWebhookDeleteWithoutEntitlement(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()

	acct, key := h.NewAccount(true)
	w1, _ := whCreate(t, h, key, "https://hooks.example.com/1", nil)
	w2, _ := whCreate(t, h, key, "https://hooks.example.com/2", nil)
	no := false
	if _, err := h.Service.Admin.UpdateAccount(ctx, acct.ID, core.AccountUpdate{Entitled: &no}); err != nil {
		t.Fatal(err)
	}

	h.Call("GET", whPath, key, nil).Expect(t, 403, core.CodeEntitlementRequired)
	h.Call("POST", whPath, key, map[string]any{"url": "https://hooks.example.com/3"}).Expect(t, 403, core.CodeEntitlementRequired)
	// Entitlement comes before validation.
	h.Call("POST", whPath, key, "{").Expect(t, 403, core.CodeEntitlementRequired)
	h.Call("POST", whPath, key, map[string]any{"url": "http://localhost"}).Expect(t, 403, core.CodeEntitlementRequired)

	r := h.Call("DELETE", whPath+"/"+w1["webhookId"].(string), key, nil).Expect(t, 200, "")
	if r.Body["ok"] != true {
		t.Fatalf("delete body = %s", r.Raw)
	}
	h.Call("DELETE", whPath+"/"+w1["webhookId"].(string), key, nil).Expect(t, 404, core.CodeWebhookNotFound)
	h.Call("DELETE", whPath+"/"+w1["webhookId"].(string)+"/", key, nil).Expect(t, 404, core.CodeWebhookNotFound)

	// An account that never had cloud can still delete (nothing to find) without 403.
	_, never := h.NewAccount(false)
	h.Call("DELETE", whPath+"/wh_0000000000000000", never, nil).Expect(t, 404, core.CodeWebhookNotFound)
	h.Call("GET", whPath, never, nil).Expect(t, 403, core.CodeEntitlementRequired)
	h.Call("POST", whPath, never, map[string]any{"url": "https://hooks.example.com/x"}).Expect(t, 403, core.CodeEntitlementRequired)
	// Nor can it delete another account's endpoint.
	h.Call("DELETE", whPath+"/"+w2["webhookId"].(string), never, nil).Expect(t, 404, core.CodeWebhookNotFound)

	// The exemption is for DELETE /webhooks/{id} only.
	h.Call("DELETE", whPath, key, nil).Expect(t, 403, core.CodeEntitlementRequired)
	h.Call("DELETE", whPath+"/"+w2["webhookId"].(string)+"/extra", key, nil).Expect(t, 403, core.CodeEntitlementRequired)
	h.Call("DELETE", "/v1/api/workspaces/ws_0000000000000000", key, nil).Expect(t, 403, core.CodeEntitlementRequired)

	// A revoked or missing key is still 401 on delete.
	h.Call("DELETE", whPath+"/"+w2["webhookId"].(string), "", nil).Expect(t, 401, core.CodeMissingAPIKey)
	h.Call("DELETE", whPath+"/"+w2["webhookId"].(string), "svc_unknown", nil).Expect(t, 401, core.CodeInvalidAPIKey)
}

func TestWebhookCreateBadBodies(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	cases := []struct {
		name string
		body any
		code string
	}{
		{"empty body", []byte(""), core.CodeInvalidJSON},
		{"blank body", []byte("  \n"), core.CodeInvalidJSON},
		{"truncated", []byte(`{"url":`), core.CodeInvalidJSON},
		{"not json", []byte(`url=https://example.com`), core.CodeInvalidJSON},
		{"trailing garbage", []byte(`{"url":"https://hooks.example.com"} x`), core.CodeInvalidJSON},
		{"two objects", []byte(`{} {}`), core.CodeInvalidJSON},
		{"single quotes", []byte(`{'url':'https://hooks.example.com'}`), core.CodeInvalidJSON},
		{"array", []byte(`["https://hooks.example.com"]`), core.CodeInvalidRequest},
		{"string", []byte(`"https://hooks.example.com"`), core.CodeInvalidRequest},
		{"number", []byte(`42`), core.CodeInvalidRequest},
		{"null", []byte(`null`), core.CodeInvalidRequest},
		{"true", []byte(`true`), core.CodeInvalidRequest},
		{"url missing", map[string]any{}, core.CodeInvalidRequest},
		{"url missing, description given", map[string]any{"description": "x"}, core.CodeInvalidRequest},
		{"url null", []byte(`{"url":null}`), core.CodeInvalidRequest},
		{"url number", map[string]any{"url": 42}, core.CodeInvalidRequest},
		{"url bool", map[string]any{"url": true}, core.CodeInvalidRequest},
		{"url array", map[string]any{"url": []string{"https://hooks.example.com"}}, core.CodeInvalidRequest},
		{"url object", map[string]any{"url": map[string]any{"href": "https://hooks.example.com"}}, core.CodeInvalidRequest},
		{"description number", map[string]any{"url": "https://hooks.example.com", "description": 7}, core.CodeInvalidRequest},
		{"url empty", map[string]any{"url": ""}, core.CodeInvalidWebhookURL},
		{"url blank", map[string]any{"url": "   "}, core.CodeInvalidWebhookURL},
	}
	for _, c := range cases {
		r := h.Call("POST", whPath, h.Key, c.body)
		if r.Status != 400 || r.Code() != c.code {
			t.Errorf("%s: got %d %s, want 400 %s", c.name, r.Status, r.Raw, c.code)
		}
	}
	// Unknown fields are ignored.
	h.Call("POST", whPath, h.Key, map[string]any{"url": "https://hooks.example.com", "events": []string{"x"}, "secret": "mine"}).Expect(t, 201, "")
	if list, raw := whList(t, h, h.Key); len(list) != 1 {
		t.Fatalf("bad bodies registered endpoints: %s", raw)
	}
}

func TestWebhookURLRules(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	path2048 := "https://hooks.example.com/" + strings.Repeat("a", 2048-len("https://hooks.example.com/"))
	rejected := []string{
		"http://hooks.example.com/h",
		"HTTP://hooks.example.com/h",
		"ftp://hooks.example.com/h",
		"ws://hooks.example.com/h",
		"file:///etc/passwd",
		"javascript:alert(1)",
		"mailto:ops@example.com",
		"hooks.example.com/h",
		"//hooks.example.com/h",
		"/relative",
		"https://",
		"https:///path",
		"https://:443/path",
		"https:hooks.example.com",
		"https://user:pass@hooks.example.com/h",
		"https://user@hooks.example.com/h",
		"https://@hooks.example.com/h",
		"https://hooks.example.com/h#frag",
		"https://hooks.example.com/h#",
		path2048 + "a",
		// 2,048 characters as sent, but longer once escaped as the hub stores it.
		"https://hooks.example.com/" + strings.Repeat("é", 2048-len("https://hooks.example.com/")),
		"https://hooks .example.com/",
		"https://127.0.0.1/h",
		"https://127.0.0.1:8443/h",
		"https://10.0.0.1/h",
		"https://192.168.1.10/h",
		"https://169.254.169.254/latest/meta-data",
		"https://8.8.8.8/h", // public, but still an IP literal
		"https://2130706433/h",
		"https://0x7f.1/h",
		"https://0x7F.1/h",
		"https://127.1/h",
		"https://0177.0.0.1/h",
		"https://127.0.0.1./h",
		"https://[::1]/h",
		"https://[::1]:8443/h",
		"https://[::ffff:127.0.0.1]/h",
		"https://[fd00::1]/h",
		"https://[2001:db8::1]/h",
		"https://localhost/h",
		"https://LOCALHOST./h",
		"https://localhost:8443/h",
		"https://foo.localhost/h",
		"https://a.b.LocalHost/h",
		"https://printer.local/h",
		"https://example.local./h",
		"https://db.internal/h",
		"https://metadata.google.internal/h",
		"https://intranet/h",
		"https://intranet./h",
		"https://local%68ost/h",
		// Hosts an HTTP client maps through IDNA onto loopback; international names
		// are accepted in their xn-- form only.
		"https://127.0.0.１/h",
		"https://１２７.０.０.１/h",
		"https://foo.ｌｏｃａｌｈｏｓｔ/h",
		"https://127。0。0。1/h",
		"https://bücher.example/h",
		// Ports url.Parse takes and a dial cannot use.
		"https://hooks.example.com:0/h",
		"https://hooks.example.com:65536/h",
		"https://hooks.example.com:99999999999999999999/h",
		"https://hooks.example.com:00/h",
	}
	for _, u := range rejected {
		r := h.Call("POST", whPath, h.Key, map[string]any{"url": u})
		if r.Status != 400 || r.Code() != core.CodeInvalidWebhookURL {
			t.Errorf("url %.80q: got %d %.300s, want 400 %s", u, r.Status, r.Raw, core.CodeInvalidWebhookURL)
		}
	}
	if list, raw := whList(t, h, h.Key); len(list) != 0 {
		t.Fatalf("rejected urls were registered: %.500s", raw)
	}

	accepted := []string{
		path2048,
		"https://hooks.example.com",
		"https://hooks.example.com:8443/h?a=b&c=d",
		"https://HOOKS.Example.COM/h",
		"https://hooks.example.com./h",
		"https://xn--bcher-kva.example/h",
		"https://my-hooks.example.co.uk/path/to/hook",
		"https://local.example.com/h",     // "local" as a label, not the suffix
		"https://internal.example.com/h",  // likewise
		"https://localhost.example.com/h", // likewise
		"https://1.example.com/h",         // numeric label, but not the last one
		"  https://hooks.example.com/trimmed  ",
		"https://hooks.example.com/é?q=ü",
	}
	for _, u := range accepted {
		r := h.Call("POST", whPath, h.Key, map[string]any{"url": u})
		if r.Status != 201 {
			t.Errorf("url %.80q: got %d %.300s, want 201", u, r.Status, r.Raw)
			continue
		}
		w := r.Body["webhook"].(map[string]any)
		got, _ := w["url"].(string)
		if pu, err := url.Parse(got); err != nil || pu.Scheme != "https" || pu.Hostname() == "" {
			t.Errorf("url %.80q stored as %q", u, got)
		}
		if u == path2048 && got != path2048 {
			t.Errorf("2,048-character url changed to %.80q...", got)
		}
		if n := len([]rune(got)); n > core.MaxWebhookURLChars {
			t.Errorf("url %.80q stored with %d characters", u, n)
		}
		// What the hub returns can be registered again as is (secret rotation).
		again := h.Call("POST", whPath, h.Key, map[string]any{"url": got}).Expect(t, 201, "")
		if u2 := again.Body["webhook"].(map[string]any)["url"]; u2 != got {
			t.Errorf("re-registering %.80q stored %.80q", got, u2)
		}
		h.Call("DELETE", whPath+"/"+w["webhookId"].(string), h.Key, nil).Expect(t, 200, "")
		h.Call("DELETE", whPath+"/"+again.Body["webhook"].(map[string]any)["webhookId"].(string), h.Key, nil).Expect(t, 200, "")
	}
}

func TestWebhookURLNotOwnHost(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithPublicURL("https://Hub.Example.com:8443/base"))
	for _, u := range []string{
		"https://hub.example.com/hook",
		"https://HUB.example.com./hook",
		"https://hub.example.com:443/hook",
		"https://hub.example.com:8443/v1/api/webhooks",
	} {
		h.Call("POST", whPath, h.Key, map[string]any{"url": u}).Expect(t, 400, core.CodeInvalidWebhookURL)
	}
	for _, u := range []string{"https://other.example.com/hook", "https://hooks.hub.example.com/hook"} {
		h.Call("POST", whPath, h.Key, map[string]any{"url": u}).Expect(t, 201, "")
	}
}

func TestWebhookDescription(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	const u = "https://hooks.example.com/h"
	for _, d := range []string{strings.Repeat("d", 201), strings.Repeat("é", 201), strings.Repeat("😀", 201), " " + strings.Repeat("d", 201) + " "} {
		h.Call("POST", whPath, h.Key, map[string]any{"url": u, "description": d}).Expect(t, 400, core.CodeInvalidWebhookDesc)
	}
	// A label is one line of printable text (a NUL is refused earlier, as in any field).
	for _, d := range []string{"line\nbreak", "tab\there", "bell\a", "c1\u0085x"} {
		h.Call("POST", whPath, h.Key, map[string]any{"url": u, "description": d}).Expect(t, 400, core.CodeInvalidWebhookDesc)
	}
	if list, _ := whList(t, h, h.Key); len(list) != 0 {
		t.Fatal("an invalid description was registered")
	}
	for _, d := range []string{strings.Repeat("d", 200), strings.Repeat("é", 200), strings.Repeat("😀", 200), "  " + strings.Repeat("d", 200) + "\n"} {
		w, _ := whCreate(t, h, h.Key, u, &d)
		if w["description"] != strings.TrimSpace(d) {
			t.Errorf("description %.20q... stored as %.20q...", d, w["description"])
		}
	}
	// An invalid URL is reported before an invalid description.
	h.Call("POST", whPath, h.Key, map[string]any{"url": "http://x", "description": strings.Repeat("d", 201)}).Expect(t, 400, core.CodeInvalidWebhookURL)
}

// Another name for the hub is the hub: a URL whose host resolves to an address of the
// hub's public host is refused like its own name, and one resolving elsewhere is not.
func TestWebhookURLResolvingToTheHubIsRefused(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Documentation addresses: resolved only, never dialed.
	hubAddr, elsewhere := net.IPv4(192, 0, 2, 7), net.IPv4(198, 51, 100, 7)
	dnstest.ServeEach(t, pc, func(name string) net.IP {
		if name == "elsewhere.example.org" {
			return elsewhere
		}
		return hubAddr // hub.example.com and every alias of it
	})
	h := hubtest.Start(t, hubtest.WithPublicURL("https://hub.example.com"),
		hubtest.WithConfig(func(c *hub.Config) { c.WebhookResolver = dnstest.Resolver(pc.LocalAddr()) }))
	for _, u := range []string{"https://alias.example.net/hook", "https://www.hub-cdn.example.org:8443/x"} {
		r := h.Call("POST", whPath, h.Key, map[string]any{"url": u})
		if r.Status != 400 || r.Code() != core.CodeInvalidWebhookURL || !strings.Contains(string(r.Raw), "must not point at this hub") {
			t.Errorf("%s: expected 400 %s, got %d %s", u, core.CodeInvalidWebhookURL, r.Status, r.Raw)
		}
	}
	h.Call("POST", whPath, h.Key, map[string]any{"url": "https://elsewhere.example.org/hook"}).Expect(t, 201, "")
}

func TestWebhookLimit(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ids := make([]string, 0, core.MaxWebhooks)
	for i := range 20 {
		w, _ := whCreate(t, h, h.Key, fmt.Sprintf("https://hooks.example.com/%d", i), nil)
		ids = append(ids, w["webhookId"].(string))
	}
	h.Call("POST", whPath, h.Key, map[string]any{"url": "https://hooks.example.com/21"}).Expect(t, 409, core.CodeWebhookLimitReached)
	// Validation comes before the limit.
	h.Call("POST", whPath, h.Key, map[string]any{"url": "http://hooks.example.com"}).Expect(t, 400, core.CodeInvalidWebhookURL)
	list, raw := whList(t, h, h.Key)
	if len(list) != 20 {
		t.Fatalf("list has %d webhooks after the limit: %.300s", len(list), raw)
	}
	for i, w := range list {
		if w["webhookId"] != ids[i] || w["url"] != fmt.Sprintf("https://hooks.example.com/%d", i) {
			t.Fatalf("list[%d] = %v, want %s in registration order", i, w, ids[i])
		}
	}
	// The limit is per account.
	_, other := h.NewAccount(true)
	whCreate(t, h, other, "https://hooks.example.com/other", nil)
	// Deleting one frees a slot.
	h.Call("DELETE", whPath+"/"+ids[5], h.Key, nil).Expect(t, 200, "")
	w, _ := whCreate(t, h, h.Key, "https://hooks.example.com/again", nil)
	h.Call("POST", whPath, h.Key, map[string]any{"url": "https://hooks.example.com/22"}).Expect(t, 409, core.CodeWebhookLimitReached)
	list, _ = whList(t, h, h.Key)
	if len(list) != 20 || list[19]["webhookId"] != w["webhookId"] {
		t.Fatalf("the new webhook is not last in registration order")
	}
}

func TestWebhookLimitUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	const n = 30
	statuses := make([]*hubtest.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i] = h.Call("POST", whPath, h.Key, map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i)})
		}()
	}
	close(start)
	wg.Wait()
	created, limited := 0, 0
	for i, r := range statuses {
		switch {
		case r == nil:
			t.Fatalf("request %d did not complete", i)
		case r.Status == 201:
			created++
		case r.Status == 409 && r.Code() == core.CodeWebhookLimitReached:
			limited++
		default:
			t.Errorf("request %d: got %d %s", i, r.Status, r.Raw)
		}
	}
	if created != core.MaxWebhooks || limited != n-core.MaxWebhooks {
		t.Fatalf("%d created and %d limited, want %d and %d", created, limited, core.MaxWebhooks, n-core.MaxWebhooks)
	}
	if list, _ := whList(t, h, h.Key); len(list) != core.MaxWebhooks {
		t.Fatalf("list has %d webhooks, want %d", len(list), core.MaxWebhooks)
	}
}

func TestWebhookCreateWithoutContentKey(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithoutContentKey())
	h.Call("POST", whPath, h.Key, map[string]any{"url": "https://hooks.example.com/h"}).Expect(t, 503, core.CodeEncryptionNotConfigured)
	// Reading endpoints keep working, and nothing was stored.
	if list, raw := whList(t, h, h.Key); len(list) != 0 {
		t.Fatalf("a webhook was stored without a content key: %s", raw)
	}
	// Body validation still answers first.
	h.Call("POST", whPath, h.Key, map[string]any{"url": "https://localhost/h"}).Expect(t, 400, core.CodeInvalidWebhookURL)
	h.Call("DELETE", whPath+"/wh_0000000000000000", h.Key, nil).Expect(t, 404, core.CodeWebhookNotFound)
}

// Webhooks created and deleted through the API are in the account's audit log, by
// the key that did it, from where, written with the change itself.
func TestWebhookChangesThroughTheAPIAreAudited(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	wh, _ := whCreate(t, h, h.Key, "https://hooks.example.com/audited", nil)
	id := wh["webhookId"].(string)
	h.Call("DELETE", whPath+"/"+id, h.Key, nil).Expect(t, 200, "")
	h.Call("DELETE", whPath+"/"+id, h.Key, nil).Expect(t, 404, "webhook_not_found")

	var rows []struct {
		Actor, ActorName, Action, Target, Detail, Address string
	}
	if err := h.PG().DB().Select(&rows, `SELECT actor, actor_name AS actorname, action, target, detail, address
		FROM audit_log WHERE account_id = $1 AND action LIKE 'webhook.%' ORDER BY id`, h.Account.ID); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		if !strings.HasPrefix(r.Actor, "api:key_") || r.ActorName != "test" || r.Address != "127.0.0.1" || r.Target != id {
			t.Errorf("expected an entry by the key, from loopback, about %s, got %+v", id, r)
		}
		got = append(got, r.Action+" "+r.Detail)
	}
	// The refused second delete changed nothing and logged nothing.
	if want := "webhook.created https://hooks.example.com/audited|webhook.deleted "; strings.Join(got, "|") != want {
		t.Errorf("expected the creation and the one deletion, got %q", got)
	}
}
