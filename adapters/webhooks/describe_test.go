package webhooks

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDescribe(t *testing.T) {
	long := strings.Repeat("é", 400)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"url prefix dropped", &url.Error{Op: "Post", URL: "https://h.example.com/?token=secret", Err: errors.New("boom")}, "boom"},
		{"newlines flattened", errors.New("line one\nline two"), "line one line two"},
		{"refusal wins", fmt.Errorf("dial: %w", &refusedError{addr: "10.0.0.7"}), "address 10.0.0.7 is not allowed"},
		{"capped", errors.New(long), strings.Repeat("é", 148) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(tc.err)
			if got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
			if len(got) > maxErrorLen || !utf8.ValidString(got) {
				t.Errorf("expected valid UTF-8 of at most %d bytes, got %d bytes", maxErrorLen, len(got))
			}
		})
	}
}
