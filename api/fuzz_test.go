package api

import (
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wshub/wshub/core"
)

// The documented 400 codes of each endpoint (api.md 4.1, 4.4, 4.10, 4.5), with
// invalid_json and invalid_request, which behaviour.md gives every JSON body.
var (
	createWorkspace400 = []string{core.CodeInvalidJSON, core.CodeInvalidRequest, core.CodeInvalidPrompt,
		core.CodeCloudProjectRequired, core.CodeAgentAndModelRequired, core.CodeInvalidGitRef,
		core.CodeInvalidIdempotencyKey, core.CodeIdempotencyKeyMismatch}
	sendMessage400 = []string{core.CodeInvalidJSON, core.CodeInvalidRequest, core.CodeInvalidMessage,
		core.CodeInvalidAssetID, core.CodeInvalidIdempotencyKey, core.CodeIdempotencyKeyMismatch}
	createWebhook400 = []string{core.CodeInvalidJSON, core.CodeInvalidRequest, core.CodeInvalidWebhookURL,
		core.CodeInvalidWebhookDesc}
	listMessages400 = []string{core.CodeInvalidMessageQuery}
)

// fuzzCheckErr fails unless err is a *core.Error with a code in allowed and a detail
// that is valid UTF-8 (it goes into a JSON body).
func fuzzCheckErr(t *testing.T, step string, err error, allowed []string) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v (%T) is not a *core.Error", step, err, err)
	}
	if !slices.Contains(allowed, ce.Code) {
		t.Fatalf("%s: code %q is not a documented 400 of this endpoint (%v)", step, ce.Code, allowed)
	}
	if ce.Detail == "" || !utf8.ValidString(ce.Detail) {
		t.Fatalf("%s: detail %q is empty or not UTF-8", step, ce.Detail)
	}
}

// fuzzCheckKey checks a resolved idempotency key: trimmed, at most 200 characters.
func fuzzCheckKey(t *testing.T, key string) {
	t.Helper()
	if key != strings.TrimSpace(key) || utf8.RuneCountInString(key) > core.MaxIdempotencyKeyChars || !utf8.ValidString(key) {
		t.Fatalf("accepted idempotency key %q", key)
	}
}

func optHeader(has bool, v string) *string {
	if !has {
		return nil
	}
	return &v
}

var validRefChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-"

func FuzzDecodeCreateWorkspace(f *testing.F) {
	long := strings.Repeat("p", core.MaxTextChars)
	for _, s := range []struct {
		body   string
		header string
		has    bool
	}{
		{``, "", false},
		{`{}`, "", false},
		{`{"prompt":"fix the bug","agent":"agent_1","model":"m"}`, "", false},
		{`{"prompt":"` + long + `"}`, "", false},
		{`{"prompt":"` + long + `x"}`, "", false},
		{`{"prompt":"  ` + long + `  "}`, "", false},
		{`{"prompt":"` + strings.Repeat("é", core.MaxTextChars) + `"}`, "", false},
		{`{"prompt":""}`, "", false},
		{`{"prompt":"   \n\t"}`, "", false},
		{`{"prompt":null,"projectId":null}`, "", false},
		{`{"prompt":5}`, "", false},
		{`{"projectId":"prj_0123456789abcdef","providerId":"local","agent":"agent_4","model":"gpt","runtimeMode":"auto-accept-edits-and-bash","baseRef":"release/1.2#x","branch":"feature/a-b_c.d","idempotencyKey":"k"}`, "k", true},
		{`{"projectId":""}`, "", false},
		{`{"providerId":"  "}`, "", false},
		{`{"agent":"agent_5"}`, "", false},
		{`{"agent":"AGENT_1"}`, "", false},
		{`{"model":""}`, "", false},
		{`{"model":"m\u0000"}`, "", false},
		{`{"projectId":"prj_000000000000000\u0000"}`, "", false},
		{`{"model":"` + strings.Repeat("m", 201) + `"}`, "", false},
		{`{"runtimeMode":"yolo"}`, "", false},
		{`{"runtimeMode":"full-access"}`, "", false},
		{`{"baseRef":"v1.0#"}`, "", false},
		{`{"branch":"a#b"}`, "", false},
		{`{"branch":"-x"}`, "", false},
		{`{"branch":"a..b"}`, "", false},
		{`{"branch":"x.lock"}`, "", false},
		{`{"branch":"a//b"}`, "", false},
		{`{"branch":"` + strings.Repeat("b", 201) + `"}`, "", false},
		{`{"branch":"ветка"}`, "", false},
		{`{"idempotencyKey":"` + strings.Repeat("k", 200) + `"}`, "", false},
		{`{"idempotencyKey":"` + strings.Repeat("k", 201) + `"}`, "", false},
		{`{"idempotencyKey":""}`, "", false},
		{`{"idempotencyKey":"a\u0000b"}`, "", false},
		{`{"idempotencyKey":"a"}`, "b", true},
		{`{}`, strings.Repeat("h", 201), true},
		{`{}`, "", true},
		{`{}`, "\xff\xfe", true},
		{`[]`, "", false},
		{`"x"`, "", false},
		{`null`, "", false},
		{`{"prompt":"x"`, "", false},
		{`{"prompt":"\ud800"}`, "", false},
		{"{\"prompt\":\"\xff\"}", "", false},
		{`{"prompt":"x","prompt":7}`, "", false},
		{`{"unknown":{"deep":[1,2,3]}}`, "", false},
	} {
		f.Add([]byte(s.body), s.header, s.has)
	}
	f.Fuzz(func(t *testing.T, body []byte, header string, hasHeader bool) {
		in, err := decodeCreateWorkspace(body, optHeader(hasHeader, header))
		if err != nil {
			fuzzCheckErr(t, "decode", err, []string{core.CodeInvalidJSON, core.CodeInvalidRequest})
			return
		}
		req, key, err := core.ValidateCreate(in)
		if err != nil {
			fuzzCheckErr(t, "validate", err, createWorkspace400)
			return
		}
		fuzzCheckKey(t, key)
		if p := req.Prompt; p != nil && (*p == "" || *p != strings.TrimSpace(*p) || utf8.RuneCountInString(*p) > core.MaxTextChars) {
			t.Fatalf("accepted prompt of %d characters", utf8.RuneCountInString(*p))
		}
		if a := req.Agent; a != nil && !slices.Contains(core.AgentIDs, *a) {
			t.Fatalf("accepted agent %q", *a)
		}
		if m := req.Model; m != nil && (*m == "" || utf8.RuneCountInString(*m) > core.MaxModelChars || strings.ContainsRune(*m, 0)) {
			t.Fatalf("accepted model %q", *m)
		}
		if m := req.RuntimeMode; m != nil && !slices.Contains(core.RuntimeModes, *m) {
			t.Fatalf("accepted runtimeMode %q", *m)
		}
		for _, ref := range []struct {
			v     *string
			extra string
		}{{req.BaseRef, "#"}, {req.Branch, ""}} {
			if ref.v == nil {
				continue
			}
			if *ref.v == "" || strings.Trim(*ref.v, validRefChars+ref.extra) != "" ||
				strings.HasPrefix(*ref.v, "-") || strings.Contains(*ref.v, "..") {
				t.Fatalf("accepted git ref %q", *ref.v)
			}
		}
		for _, id := range []*string{req.ProjectID, req.ProviderID} {
			if id != nil && *id == "" {
				t.Fatal("accepted an empty id")
			}
		}
	})
}

func FuzzDecodeSendMessage(f *testing.F) {
	long := strings.Repeat("t", core.MaxTextChars)
	ids := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"asset_000000000000000` + string(rune('A'+i)) + `"`)
		}
		return b.String()
	}
	for _, s := range []struct {
		body   string
		header string
		has    bool
	}{
		{``, "", false},
		{`{}`, "", false},
		{`{"text":"hello"}`, "", false},
		{`{"text":""}`, "", false},
		{`{"text":"  "}`, "", false},
		{`{"text":null}`, "", false},
		{`{"text":5}`, "", false},
		{`{"text":"` + long + `"}`, "", false},
		{`{"text":"` + long + `x"}`, "", false},
		{`{"text":"` + strings.Repeat("😀", core.MaxTextChars) + `"}`, "", false},
		{`{"text":"","attachments":["asset_0123456789abcdef"]}`, "", false},
		{`{"text":"x","attachments":[` + ids(8) + `]}`, "", false},
		{`{"text":"x","attachments":[` + ids(9) + `]}`, "", false},
		{`{"text":"x","attachments":[` + ids(8) + `,"asset_000000000000000A"]}`, "", false},
		{`{"text":"x","attachments":["asset_short"]}`, "", false},
		{`{"text":"x","attachments":["ws_0123456789abcdef"]}`, "", false},
		{`{"text":"x","attachments":["asset_0123456789abcde!"]}`, "", false},
		{`{"text":"x","attachments":[1]}`, "", false},
		{`{"text":"x","attachments":"asset_0123456789abcdef"}`, "", false},
		{`{"text":"x","attachments":null}`, "", false},
		{`{"text":"x","attachments":[]}`, "", false},
		{`{"text":"","attachments":[]}`, "", false},
		{`{"text":"x","idempotencyKey":"k"}`, "k", true},
		{`{"text":"x","idempotencyKey":"k"}`, "other", true},
		{`{"text":"x","idempotencyKey":" k "}`, "k", true},
		{`{"text":"x"}`, strings.Repeat("h", 200), true},
		{`{"text":"x"}`, strings.Repeat("h", 201), true},
		{`{"text":"x"}`, "   ", true},
		{`[]`, "", false},
		{`{"text":"x"`, "", false},
		{"{\"text\":\"\xc3\x28\"}", "", false},
	} {
		f.Add([]byte(s.body), s.header, s.has)
	}
	f.Fuzz(func(t *testing.T, body []byte, header string, hasHeader bool) {
		in, err := decodeSendMessage(body, optHeader(hasHeader, header))
		if err != nil {
			fuzzCheckErr(t, "decode", err, []string{core.CodeInvalidJSON, core.CodeInvalidRequest})
			return
		}
		req, key, err := core.ValidateSend(in)
		if err != nil {
			fuzzCheckErr(t, "validate", err, sendMessage400)
			return
		}
		fuzzCheckKey(t, key)
		if req.Text != strings.TrimSpace(req.Text) || utf8.RuneCountInString(req.Text) > core.MaxTextChars {
			t.Fatalf("accepted text of %d characters", utf8.RuneCountInString(req.Text))
		}
		if len(req.Attachments) > core.MaxAttachments {
			t.Fatalf("accepted %d attachments", len(req.Attachments))
		}
		if req.Text == "" && len(req.Attachments) == 0 {
			t.Fatal("accepted an empty message without attachments")
		}
		seen := map[string]bool{}
		for _, id := range req.Attachments {
			if !core.ValidID(id, core.PrefixAsset) || seen[id] {
				t.Fatalf("accepted attachment list %q", req.Attachments)
			}
			seen[id] = true
		}
	})
}

func FuzzDecodeCreateWebhook(f *testing.F) {
	host := "https://hooks.example.com/"
	for _, s := range []string{
		``,
		`{}`,
		`{"url":"https://hooks.example.com/h"}`,
		`{"url":"https://hooks.example.com/h","description":"ci"}`,
		`{"url":"https://hooks.example.com/h","description":"` + strings.Repeat("d", 200) + `"}`,
		`{"url":"https://hooks.example.com/h","description":"` + strings.Repeat("d", 201) + `"}`,
		`{"url":"https://hooks.example.com/h","description":5}`,
		`{"url":"` + host + strings.Repeat("a", 2048-len(host)) + `"}`,
		`{"url":"` + host + strings.Repeat("a", 2049-len(host)) + `"}`,
		`{"url":null}`,
		`{"url":42}`,
		`{"url":""}`,
		`{"url":"http://hooks.example.com"}`,
		`{"url":"ftp://hooks.example.com"}`,
		`{"url":"https://"}`,
		`{"url":"https://u:p@hooks.example.com"}`,
		`{"url":"https://hooks.example.com/#f"}`,
		`{"url":"https://127.0.0.1"}`,
		`{"url":"https://10.0.0.1"}`,
		`{"url":"https://2130706433"}`,
		`{"url":"https://0x7f.1"}`,
		`{"url":"https://127.1"}`,
		`{"url":"https://0177.0.0.1"}`,
		`{"url":"https://[::1]"}`,
		`{"url":"https://[fe80::1%25eth0]"}`,
		`{"url":"https://localhost"}`,
		`{"url":"https://LOCALHOST."}`,
		`{"url":"https://foo.localhost"}`,
		`{"url":"https://printer.local"}`,
		`{"url":"https://example.local."}`,
		`{"url":"https://db.internal"}`,
		`{"url":"https://intranet"}`,
		`{"url":"https://local%68ost"}`,
		`{"url":"https://xn--bcher-kva.example"}`,
		`{"url":"https://bücher.example/ü?q=ü"}`,
		`{"url":"https://127.0.0.１"}`,
		`{"url":"https://foo.ｌｏｃａｌｈｏｓｔ"}`,
		`{"url":"https://hooks.example.com:99999"}`,
		`{"url":"https://hooks.example.com/a b"}`,
		`{"url":"https:hooks.example.com"}`,
		`{"url":"HTTPS://Hooks.Example.com./"}`,
		`[]`,
		`{"url":"x"`,
	} {
		f.Add([]byte(s))
	}
	policy := core.WebhookURLPolicy{}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeCreateWebhook(body)
		if err != nil {
			fuzzCheckErr(t, "decode", err, []string{core.CodeInvalidJSON, core.CodeInvalidRequest})
			return
		}
		if in.URL == nil {
			t.Fatal("decode accepted a body without url")
		}
		stored, err := policy.CheckWebhookURL(*in.URL)
		if err != nil {
			fuzzCheckErr(t, "url", err, createWebhook400)
			return
		}
		// What is stored is a public https URL with a named, non-IP host, and it
		// passes the same check again unchanged.
		u, err := url.Parse(stored)
		if err != nil {
			t.Fatalf("stored url %q does not parse: %v", stored, err)
		}
		h := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
		switch {
		case !strings.EqualFold(u.Scheme, "https"), u.User != nil, u.Fragment != "", strings.Contains(stored, "#"):
			t.Fatalf("accepted %q (stored %q)", *in.URL, stored)
		case h == "" || !strings.Contains(h, ".") || net.ParseIP(h) != nil || strings.Contains(h, ":"),
			strings.Trim(h, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "":
			t.Fatalf("accepted host %q of %q", h, *in.URL)
		case h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".internal"):
			t.Fatalf("accepted host %q of %q", h, *in.URL)
		}
		again, err := policy.CheckWebhookURL(stored)
		if err != nil || again != stored {
			t.Fatalf("stored url %q does not pass again: %q, %v", stored, again, err)
		}
	})
}

func FuzzParseMessageQuery(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"0", "1"}, {"0", "200"}, {"0", "201"}, {"5", "50"}, {" 7 ", " 9 "},
		{"-1", ""}, {"", "0"}, {"", "-5"}, {"abc", ""}, {"", "abc"}, {"1.5", ""}, {"", "2.0"},
		{"+3", "+4"}, {"9223372036854775807", "9223372036854775807"}, {"9223372036854775808", ""},
		{"", "99999999999999999999999"}, {"", "-99999999999999999999999"}, {"0x10", "1e3"},
		{"\x00", "\xff"}, {"１", "２"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, afterSeq, limit string) {
		after, lim, err := core.ParseMessageQuery(afterSeq, limit)
		if err != nil {
			fuzzCheckErr(t, "query", err, listMessages400)
			return
		}
		if after < 0 || lim < 1 || lim > core.MaxMessagesPage {
			t.Fatalf("ParseMessageQuery(%q, %q) = %d, %d", afterSeq, limit, after, lim)
		}
		if strings.TrimSpace(limit) == "" && lim != core.MaxMessagesPage {
			t.Fatalf("default limit = %d, want %d", lim, core.MaxMessagesPage)
		}
		if strings.TrimSpace(afterSeq) == "" && after != 0 {
			t.Fatalf("default afterSeq = %d, want 0", after)
		}
	})
}

// FuzzDecodeDecision: any body gives allow or deny, or invalid_json / invalid_request.
func FuzzDecodeDecision(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"decision":"allow"}`, `{"decision":"deny"}`, `{"decision":"Allow"}`,
		`{"decision":null}`, `{"decision":1}`, `[]`, `"allow"`, `{"decision":"allow","x":1}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := decodeDecision(body)
		if err == nil {
			if d != core.DecisionAllow && d != core.DecisionDeny {
				t.Fatalf("decoded %q from %q", d, body)
			}
			return
		}
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != core.CodeInvalidJSON && ce.Code != core.CodeInvalidRequest {
			t.Fatalf("unexpected error %v for %q", err, body)
		}
	})
}
