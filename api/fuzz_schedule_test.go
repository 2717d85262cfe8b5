package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wshub/wshub/core"
)

// scheduleFields are the create and update body's fields, each an optional string.
var scheduleFields = []string{"name", "projectId", "agent", "model", "prompt", "cron", "timeZone", "mode"}

// FuzzDecodeSchedule: a schedule body is taken exactly when it is a JSON object of
// UTF-8 text without a NUL whose known fields are strings or null, and then each field
// is what encoding/json reads (null and absent alike nil); anything else is
// invalid_json or invalid_request with a sentence.
func FuzzDecodeSchedule(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `"x"`, `{`, `{"name":"x"`,
		`{"name":"weekly deps","projectId":"prj_0123456789abcdef","agent":"agent_1","model":"sonnet",` +
			`"prompt":"update the dependencies","cron":"0 9 * * 1","timeZone":"Europe/Paris","mode":"standing"}`,
		`{"cron":"@every 1h"}`, `{"cron":"TZ=Asia/Tokyo 0 9 * * *"}`, `{"cron":5}`, `{"cron":null}`, `{"cron":["0 9 * * 1"]}`,
		`{"timeZone":{"name":"UTC"}}`, `{"mode":true}`, `{"prompt":"` + strings.Repeat("p", core.MaxTextChars+1) + `"}`,
		`{"name":"a\u0000b"}`, `{"other":"\u0000"}`, `{"a\u0000":1}`, `{"other":{"deep":["\u0000"]}}`, `{"name":"\ud800"}`,
		`{"name":"x","name":5}`, `{"name":5,"name":"x"}`, "{\"name\":\"\xc3\x28\"}", `{"name":"😀\n\t"}`, ` {"mode":"new"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeSchedule(body)
		want, ok := referenceSchedule(body)
		if err != nil {
			fuzzCheckErr(t, "decode", err, []string{core.CodeInvalidJSON, core.CodeInvalidRequest})
			if ok {
				t.Fatalf("refused %q (%v), which has only string or null fields", body, err)
			}
			return
		}
		if !ok {
			t.Fatalf("accepted %q, which is not an object of plain text with string fields", body)
		}
		got := []*string{in.Name, in.ProjectID, in.Agent, in.Model, in.Prompt, in.Cron, in.TimeZone, in.Mode}
		for i, name := range scheduleFields {
			switch {
			case (got[i] == nil) != (want[name] == nil):
				t.Fatalf("%s of %q: expected present %v, got %v", name, body, want[name] != nil, got[i] != nil)
			case got[i] != nil && *got[i] != *want[name]:
				t.Fatalf("%s of %q: expected %q, got %q", name, body, *want[name], *got[i])
			}
		}
	})
}

// referenceSchedule is what decodeSchedule should make of body, read another way:
// the known fields by name, and whether the body is one it should take.
func referenceSchedule(body []byte) (map[string]*string, bool) {
	body = bytes.TrimSpace(body)
	var v map[string]any
	if !utf8.Valid(body) || json.Unmarshal(body, &v) != nil || v == nil || !plainText(v) {
		return nil, false
	}
	out := map[string]*string{}
	for _, name := range scheduleFields {
		switch f := v[name].(type) {
		case nil:
		case string:
			out[name] = &f
		default:
			return nil, false
		}
	}
	return out, true
}

// plainText says no string or key within v holds a NUL.
func plainText(v any) bool {
	switch v := v.(type) {
	case string:
		return !strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if !plainText(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || !plainText(e) {
				return false
			}
		}
	}
	return true
}
