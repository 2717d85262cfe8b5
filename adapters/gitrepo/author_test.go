package gitrepo

import "testing"

func TestParseAuthor(t *testing.T) {
	for in, want := range map[string]Author{
		"":                              DefaultAuthor,
		"Build Bot <bot@example.com>":   {"Build Bot", "bot@example.com"},
		`"Ops, Team" <ops@example.com>`: {"Ops, Team", "ops@example.com"},
	} {
		if got, err := ParseAuthor(in); err != nil || got != want {
			t.Errorf("ParseAuthor(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"bot@example.com", "Bot", "Bot <not an address>", "Bot <a@b>\nX: y"} {
		if _, err := ParseAuthor(bad); err == nil {
			t.Errorf("ParseAuthor(%q): expected an error", bad)
		}
	}
}
