package core

import (
	"strings"
	"testing"
)

func TestMaskerHidesEveryByteOfEverySecret(t *testing.T) {
	t.Parallel()
	m := NewMasker([]string{"hunter22", "ter22xyz", "abc", "s3cr3t-token", "-----BEGIN KEY-----\nAAAABBBBCCCC\nDDDD\n-----END KEY-----"})
	for _, tt := range []struct{ name, in, want string }{
		{"none", "nothing to hide here", "nothing to hide here"},
		{"one", "token=s3cr3t-token; ok", "token=****; ok"},
		{"each occurrence", "s3cr3t-token s3cr3t-token", "**** ****"},
		{"overlapping values are one run", "pw hunter22xyz!", "pw ****!"},
		{"touching values are one run", "hunter22hunter22", "****"},
		{"shorter than the minimum is left", "abc abcd", "abc abcd"},
		{"a line of a multi-line value", "line: AAAABBBBCCCC", "line: ****"},
		{"the whole multi-line value", "k=-----BEGIN KEY-----\nAAAABBBBCCCC\nDDDD\n-----END KEY-----.", "k=****."},
		{"unicode around", "é hunter22 ü", "é **** ü"},
	} {
		if got := m.Mask(tt.in); got != tt.want {
			t.Errorf("%s: Mask(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestMaskerOfNothingMasksNothing(t *testing.T) {
	t.Parallel()
	var nilMasker *Masker
	for _, m := range []*Masker{nilMasker, NewMasker(nil), NewMasker([]string{"", "ab", "\n\n"})} {
		if got := m.Mask("a b ab abc"); got != "a b ab abc" {
			t.Errorf("expected nothing masked, got %q", got)
		}
		if m.Holds("ab") || m.HoldsJSON([]byte(`{"ab":"ab"}`)) {
			t.Error("expected nothing held")
		}
	}
}

// A value with a quote or a line break is escaped in JSON text: it is still found.
func TestMaskerFindsSecretsInJSONStrings(t *testing.T) {
	t.Parallel()
	m := NewMasker([]string{`pa"ss\word`, "plain-secret"})
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{`{"command":"echo plain-secret"}`, true},
		{`{"command":"echo pa\"ss\\word"}`, true},
		{`{"pa\"ss\\word":1}`, true},
		{`{"command":"echo \u0070lain-secret"}`, true},
		{`{"command":"echo $TOKEN"}`, false},
	} {
		if got := m.HoldsJSON([]byte(tt.in)); got != tt.want {
			t.Errorf("HoldsJSON(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestMaskerOnLongText(t *testing.T) {
	t.Parallel()
	m := NewMasker([]string{"aaaa"})
	if got := m.Mask(strings.Repeat("a", 10000) + "b"); got != "****b" {
		t.Fatalf("expected one run masked, got %q", got)
	}
}
