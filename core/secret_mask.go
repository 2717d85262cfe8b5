package core

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Masking: every text a run of a project's workspace says (setup output, an agent's
// events, its reply and failure message, an approval's description) passes through a
// Masker before it is stored or sent, so a secret value printed by a script or an
// agent leaves the hub as ****.

// SecretMask is what a secret value is replaced with.
const SecretMask = "****"

// MinMaskedSecret is the shortest value masked. Masking shorter ones would wreck every
// text ("ab" would hide half the words of a reply) while hiding nothing a guess would
// not find, so a secret shorter than this cannot be set at all (ProjectSecrets.Set),
// and a line this short of a secret of several lines is left as it is.
const MinMaskedSecret = 4

// Masker replaces secret values in text with SecretMask.
type Masker struct {
	// values to find, longest first, each MinMaskedSecret bytes or more.
	values []string
}

// NewMasker masks values. A value of several lines is masked whole and line by line
// too, since a script's output is read one line at a time.
func NewMasker(values []string) *Masker {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if len(v) >= MinMaskedSecret && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, v := range values {
		add(v)
		if strings.ContainsAny(v, "\r\n") {
			for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
				add(line)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return &Masker{values: out}
}

// Mask returns s with every occurrence of every value replaced by SecretMask (a nil
// Masker masks nothing). Occurrences that overlap or touch are one run of hidden bytes
// and become one SecretMask, so no part of either value shows.
func (m *Masker) Mask(s string) string {
	if m == nil || s == "" {
		return s
	}
	var spans [][2]int
	for _, v := range m.values {
		for from := 0; ; {
			i := strings.Index(s[from:], v)
			if i < 0 {
				break
			}
			start := from + i
			spans = append(spans, [2]int{start, start + len(v)})
			from = start + 1
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	at := 0 // s[:at] is written
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[at:start])
		b.WriteString(SecretMask)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// Holds reports whether s contains any of the values.
func (m *Masker) Holds(s string) bool {
	if m == nil {
		return false
	}
	for _, v := range m.values {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// HoldsJSON reports whether any value is in the JSON text raw or in one of its
// strings (keys included) read unescaped: a value holding a quote, a backslash or a
// line break appears escaped in the text.
func (m *Masker) HoldsJSON(raw []byte) bool {
	if m == nil {
		return false
	}
	if m.Holds(string(raw)) {
		return true
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && m.Holds(s) {
			return true
		}
	}
}
