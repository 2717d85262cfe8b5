package chat

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The checker below reads parts back independently of split.go's bookkeeping: it
// follows Slack's reading of ``` (each complete group of three backticks in a run
// toggles a code block), strips the fences the splitter may add, and matches what is
// left against the original text.

var (
	shortEntityRE = regexp.MustCompile(`&[A-Za-z0-9#]{1,8};|<[^<>\n]{1,20}>`)
	infoStringRE  = regexp.MustCompile(`^[A-Za-z0-9#_+.\-]{1,32}$`)
	backtickRunRE = regexp.MustCompile("`+")
)

// fenceToggles counts the ``` toggles in s.
func fenceToggles(s string) int {
	n := 0
	for _, run := range backtickRunRE.FindAllString(s, -1) {
		n += len(run) / 3
	}
	return n
}

type fenceState struct {
	open bool
	info string
}

// fenceStates says, for each rune index of src (0..len), whether a code block is open
// there, and the info string a continuation must repeat: that of the opening line when
// it is only a short language-like word; "" when the block was opened mid-line or at a
// point inside a run of backticks.
func fenceStates(src []rune) []fenceState {
	st := make([]fenceState, len(src)+1)
	cur := fenceState{}
	for i := 0; i < len(src); {
		st[i] = cur
		if src[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(src) && src[j] == '`' {
			j++
		}
		for c := i + 1; c < j; c++ { // inside the run: only whole groups of three count
			st[c] = cur
			if ((c-i)/3)%2 == 1 {
				st[c] = fenceState{open: !cur.open}
			}
		}
		if ((j-i)/3)%2 == 1 {
			cur = fenceState{open: !cur.open}
			if cur.open {
				ls, le := i, j
				for ls > 0 && src[ls-1] != '\n' {
					ls--
				}
				for le < len(src) && src[le] != '\n' {
					le++
				}
				if strings.Trim(string(src[ls:i]), " \t") == "" {
					if w := strings.TrimSpace(string(src[j:le])); infoStringRE.MatchString(w) {
						cur.info = w
					}
				}
			}
		}
		i = j
	}
	st[len(src)] = cur
	return st
}

func hasRunePrefix(s, prefix []rune) bool {
	if len(prefix) > len(s) {
		return false
	}
	for i, r := range prefix {
		if s[i] != r {
			return false
		}
	}
	return true
}

// checkSplit verifies the invariants of Split(text, max) == parts and returns
// the cut points (rune indices into text where each part's own text ends, except the last).
func checkSplit(t *testing.T, text string, max int, parts []string) []int {
	t.Helper()
	if max < minSplitMax {
		max = minSplitMax
	}
	if strings.TrimSpace(text) == "" {
		if len(parts) != 1 || parts[0] != emptyReplyText {
			t.Fatalf("blank text %q: expected [%q], got %q", text, emptyReplyText, parts)
		}
		return nil
	}
	if len(parts) == 0 {
		t.Fatalf("expected at least one part, got none")
	}
	src := []rune(text)
	states := fenceStates(src)
	idx := 0
	var cuts []int
	for k, p := range parts {
		if strings.TrimSpace(p) == "" {
			t.Fatalf("part %d: expected visible text, got %q", k, p)
		}
		if !utf8.ValidString(p) {
			t.Fatalf("part %d: expected valid UTF-8, got %q", k, p)
		}
		if n := utf8.RuneCountInString(p); n > max {
			t.Fatalf("part %d: expected at most %d runes, got %d", k, max, n)
		}
		if n := fenceToggles(p); n%2 != 0 {
			t.Fatalf("part %d: expected balanced ``` (even count), got %d in %q", k, n, abbrev(p))
		}
		q := []rune(p)
		open, info := states[idx].open, states[idx].info
		if open {
			reopen := []rune("```" + info + "\n")
			if !hasRunePrefix(q, reopen) {
				t.Fatalf("part %d continues a code block: expected it to start with %q, got %q", k, string(reopen), abbrev(p))
			}
			q = q[len(reopen):]
		}
		// Candidates for the part's own text: all of q, or q without an added closing
		// fence ("```" after a newline, or "\n```").
		type cand struct {
			text   []rune
			closed bool // a fence was added at the end
		}
		cands := []cand{{q, false}}
		if s := string(q); strings.HasSuffix(s, "```") {
			if strings.HasSuffix(s, "\n```") {
				cands = append(cands, cand{q[:len(q)-3], true})
				if len(q) >= 5 && q[len(q)-5] != '\n' {
					cands = append(cands, cand{q[:len(q)-4], true})
				}
			}
		}
		matched := false
		// A whitespace-only stretch outside code may have been dropped before this part.
		for skip := 0; !matched && idx+skip <= len(src); skip++ {
			if skip > 0 && (open || !unicode.IsSpace(src[idx+skip-1])) {
				break
			}
			at := idx + skip
			for _, c := range cands {
				if !hasRunePrefix(src[at:], c.text) || len(c.text) == 0 {
					continue
				}
				end := at + len(c.text)
				if states[end].open != c.closed {
					continue
				}
				idx, matched = end, true
				break
			}
		}
		if !matched {
			t.Fatalf("part %d: expected a continuation of the text at rune %d (%q...), got %q",
				k, idx, abbrev(string(src[idx:])), abbrev(p))
		}
		if k < len(parts)-1 {
			cuts = append(cuts, idx)
		}
	}
	if rest := string(src[idx:]); strings.TrimSpace(rest) != "" {
		t.Fatalf("expected the parts to cover the text, got %d runes left: %q", len(src)-idx, abbrev(rest))
	}
	for _, loc := range shortEntityRE.FindAllStringIndex(text, -1) {
		a := utf8.RuneCountInString(text[:loc[0]])
		e := a + utf8.RuneCountInString(text[loc[0]:loc[1]])
		for _, c := range cuts {
			if a < c && c < e {
				t.Fatalf("expected entity %q kept whole, got a cut at rune %d inside it", text[loc[0]:loc[1]], c)
			}
		}
	}
	return cuts
}

// checkClusters: no cut splits a grapheme cluster (used where every cluster fits a part).
func checkClusters(t *testing.T, text string, cuts []int) {
	t.Helper()
	src := []rune(text)
	for _, c := range cuts {
		a, b := src[c-1], src[c]
		if a == '\u200d' || unicode.In(b, unicode.Mn, unicode.Me, unicode.Mc) || b == '\u200d' ||
			(b >= 0xFE00 && b <= 0xFE0F) || (b >= 0x1F3FB && b <= 0x1F3FF) {
			t.Fatalf("expected no cut inside a grapheme cluster, got one between %U and %U", a, b)
		}
		if isRegional(a) && isRegional(b) {
			n := 0
			for i := c - 1; i >= 0 && isRegional(src[i]); i-- {
				n++
			}
			if n%2 == 1 {
				t.Fatalf("expected flag pairs kept whole, got a cut at rune %d", c)
			}
		}
	}
}

func abbrev(s string) string {
	r := []rune(s)
	if len(r) <= 80 {
		return s
	}
	return string(r[:40]) + "…" + string(r[len(r)-40:])
}

func TestSplitForSlackExamples(t *testing.T) {
	para := strings.Repeat("word ", 10)                        // 50 runes
	code := "```go\n" + strings.Repeat("x := 1\n", 12) + "```" // 6 + 84 + 3
	tests := []struct {
		name string
		text string
		max  int
		want []string
	}{
		{"empty", "", 100, []string{"(empty reply)"}},
		{"blank", " \n\t\n", 100, []string{"(empty reply)"}},
		{"fits", "hello *world*", 100, []string{"hello *world*"}},
		{"exactly max", strings.Repeat("a", 64), 64, []string{strings.Repeat("a", 64)}},
		{"max raised to minimum", strings.Repeat("a", 64), 10, []string{strings.Repeat("a", 64)}},
		{"blank line preferred", para + "\n\n" + para, 100, []string{para + "\n\n", para}},
		{"newline then", para + "\n" + para, 100, []string{para + "\n", para}},
		{"space then", strings.Repeat("abcd ", 30), 100, []string{strings.Repeat("abcd ", 20), strings.Repeat("abcd ", 10)}},
		{"no space: hard cut", strings.Repeat("a", 150), 100, []string{strings.Repeat("a", 100), strings.Repeat("a", 50)}},
		{"code block continues with info string", code, 64, []string{
			"```go\n" + strings.Repeat("x := 1\n", 7) + "```",
			"```go\n" + strings.Repeat("x := 1\n", 5) + "```",
		}},
		{"fence never closed is closed", "see:\n```\nabc", 100, []string{"see:\n```\nabc\n```"}},
		{"whitespace run dropped", strings.Repeat("a", 60) + strings.Repeat(" ", 200) + "b", 64, []string{
			strings.Repeat("a", 60) + strings.Repeat(" ", 4), "    b", // 3 x 64 spaces dropped
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text, tt.max)
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Fatalf("expected %q, got %q", tt.want, got)
			}
			checkSplit(t, tt.text, tt.max, got)
		})
	}
}

func TestSplitForSlackCodeBlocks(t *testing.T) {
	line := "\tfmt.Println(\"hello, world\") // a line of code\n" // 48 runes
	tests := []struct {
		name     string
		text     string
		max      int
		wantInfo string // each continuation part starts with "```"+wantInfo+"\n"
		minParts int
	}{
		{"long go block", "Here:\n\n```go\n" + strings.Repeat(line, 200) + "```\nDone.", 500, "go", 20},
		{"no info", "```\n" + strings.Repeat(line, 100) + "```", 300, "", 17},
		{"info with symbols", "```objective-c\n" + strings.Repeat(line, 50) + "```", 200, "objective-c", 15},
		{"code without newlines", "```python\n" + strings.Repeat("x", 3000) + "\n```", 400, "python", 8},
		{"never closed", "text\n```sh\n" + strings.Repeat(line, 60), 300, "sh", 10},
		{"info string not repeated when long", "```" + strings.Repeat("l", 40) + "\n" + strings.Repeat(line, 20), 200, "", 5},
		{"four backticks", "````md\n" + strings.Repeat(line, 30) + "````", 200, "md", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := Split(tt.text, tt.max)
			checkSplit(t, tt.text, tt.max, parts)
			if len(parts) < tt.minParts {
				t.Fatalf("expected at least %d parts, got %d", tt.minParts, len(parts))
			}
			for k, p := range parts[1:] {
				if want := "```" + tt.wantInfo + "\n"; !strings.HasPrefix(p, want) {
					t.Fatalf("part %d: expected to start with %q, got %q", k+1, want, abbrev(p))
				}
			}
			for k, p := range parts {
				if !strings.HasSuffix(strings.TrimSpace(p), "```") && k < len(parts)-1 {
					t.Fatalf("part %d: expected to end with a closing fence, got %q", k, abbrev(p))
				}
			}
		})
	}
}

func TestSplitForSlackSeveralFences(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "Step %d explains the change in a few words.\n\n```js\n", i)
		b.WriteString(strings.Repeat("console.log(i);\n", i%7+1))
		b.WriteString("```\n\n")
	}
	text := b.String()
	for _, max := range []int{64, 120, 300, 1000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			parts := Split(text, max)
			cuts := checkSplit(t, text, max, parts)
			if max >= 300 {
				// Blocks this short are never split: every cut falls outside code.
				for _, c := range cuts {
					if fenceStates([]rune(text))[c].open {
						t.Fatalf("expected cuts outside code blocks, got one inside at rune %d", c)
					}
				}
			}
		})
	}
}

func TestSplitForSlackEntitiesAndRunes(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"amp entities back to back", strings.Repeat("&amp;&lt;&gt;", 400)},
		{"mentions without spaces", strings.Repeat("<@U0123ABC>", 300)},
		{"links", strings.Repeat("<https://example.com/a?b=c|label>", 100)},
		{"emoji", strings.Repeat("😀", 1000)},
		{"zwj family emoji", strings.Repeat("👩\u200d👩\u200d👧\u200d👦", 300)},
		{"skin tones and variation selectors", strings.Repeat("👍🏽❤\ufe0f", 500)},
		{"flags", strings.Repeat("🇫🇷🇯🇵", 300)},
		{"combining marks", strings.Repeat("e\u0301a\u0300", 500)},
		{"cjk", strings.Repeat("漢字とかなの文章", 300)},
		{"cjk with punctuation", strings.Repeat("これは文です。", 300)},
		{"crlf", strings.Repeat("line\r\n", 500)},
	}
	for _, tt := range tests {
		for _, max := range []int{64, 65, 66, 67, 100, 3900} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, max), func(t *testing.T) {
				parts := Split(tt.text, max)
				cuts := checkSplit(t, tt.text, max, parts)
				checkClusters(t, tt.text, cuts)
				src := []rune(tt.text)
				for _, c := range cuts {
					if src[c-1] == '\r' && src[c] == '\n' {
						t.Fatalf("expected \\r\\n kept together, got a cut at rune %d", c)
					}
				}
			})
		}
	}
}

// inputs returns random and adversarial texts.
func inputs() []string {
	tokens := []string{
		"word", "the", "agent", "changed", " ", " ", " ", "\n", "\n", "\n\n", "\t", "```", "```go\n",
		"\n```\n", "`", "``", "````", "&", "<", ">", "&amp;", "<@U123>", "<https://x.example/p?q=1&amp;r=2|label>",
		"😀", "👩\u200d👩\u200d👧", "🇫🇷", "e\u0301", "漢字", "かな", "\r\n", "*bold*", "_it_",
		strings.Repeat("z", 70), "```python\nprint(1)\n```\n",
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var out []string
	for range 60 {
		var b strings.Builder
		n := rng.IntN(1500)
		for range n {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		out = append(out, b.String())
	}
	code := "```go\n" + strings.Repeat("func f() { return }\n", 300) + "```\n"
	out = append(out,
		strings.Repeat("x", 10000),
		strings.Repeat("😀", 5000),
		strings.Repeat("漢", 9000),
		code,
		"intro\n\n"+code+"outro\n\n"+code,
		"```\n"+strings.Repeat("y", 9000),
		"```js\n"+strings.Repeat("let a = 1;\n", 500),
		strings.Repeat("```", 2000),
		strings.Repeat("`", 4001),
		strings.Repeat("``` ", 1000),
		strings.Repeat("\n", 5000)+"x",
		strings.Repeat(" ", 5000)+"x"+strings.Repeat(" ", 5000),
		strings.Repeat("&amp;", 3000),
		strings.Repeat("<@U1>", 3000),
		"<"+strings.Repeat("u", 3000)+">",
		"<https://example.com/"+strings.Repeat("p", 900)+"|link>",
		strings.Repeat("a\u0301", 50)+strings.Repeat("\u0301", 500),
		strings.Repeat("```go\n\n```\n", 400),
		strings.Repeat("```\n", 1500),
		"```"+strings.Repeat("info", 30)+"\n"+strings.Repeat("code\n", 400),
		strings.Repeat("a```b", 1500),
		strings.Repeat("\n```go\nx\n", 700),
		"\xff\xfe invalid \xc3 utf-8 "+strings.Repeat("q", 500),
	)
	return out
}

func TestSplitForSlackInvariants(t *testing.T) {
	for i, text := range inputs() {
		for _, max := range []int{64, 70, 97, 160, 512, maxPostChars} {
			t.Run(fmt.Sprintf("%d/%d", i, max), func(t *testing.T) {
				checkSplit(t, text, max, Split(text, max))
			})
		}
	}
}

// prose builds n runes of paragraphs of plain sentences.
func prose(n int) string {
	words := []string{"the", "workspace", "agent", "changed", "three", "files", "and", "ran", "tests", "on", "branch"}
	rng := rand.New(rand.NewPCG(3, 5))
	var b strings.Builder
	count := 0
	for count < n {
		var w string
		switch {
		case rng.IntN(60) == 0:
			w = ".\n\n"
		case rng.IntN(12) == 0:
			w = ". "
		default:
			w = " " + words[rng.IntN(len(words))]
		}
		b.WriteString(w)
		count += len(w)
	}
	return string([]rune(b.String())[:n])
}

func TestSplitForSlackFullReplyPartCount(t *testing.T) {
	line := strings.Repeat("c", 70) + "\n"
	tests := []struct {
		name string
		text string
	}{
		{"prose", prose(16384)},
		{"code", "```\n" + strings.Repeat(line, 16384/len(line)) + "```"},
		{"no spaces", strings.Repeat("x", 16384)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := utf8.RuneCountInString(tt.text)
			parts := slackFormat(Reply{Text: tt.text, Outcome: "completed", Truncated: true})
			for k, p := range parts {
				if c := utf8.RuneCountInString(p); c > maxPostChars {
					t.Fatalf("part %d: expected at most %d runes, got %d", k, maxPostChars, c)
				}
			}
			if want := (n+maxPostChars-1)/maxPostChars + 1; len(parts) > want {
				t.Fatalf("%d runes: expected at most %d parts, got %d", n, want, len(parts))
			}
			if !strings.HasSuffix(parts[len(parts)-1], lineTruncated) {
				t.Fatalf("expected the last part to end with the truncation line, got %q", abbrev(parts[len(parts)-1]))
			}
			body := Split(tt.text, maxPostChars)
			checkSplit(t, tt.text, maxPostChars, body)
		})
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", "hello", "```go\nx\n```", "```\nnever closed", "a&amp;b<@U1>c", "😀👩\u200d👩\u200d👧🇫🇷e\u0301",
		"漢字かな。", "````\n```\n````", "\r\n\r\n", strings.Repeat("`", 10), "x\n\n```js\ny\n```\n\nz",
	} {
		f.Add(s, uint16(0), byte(0))
	}
	f.Add(strings.Repeat("ab ", 100), uint16(3), byte(1))
	f.Add("```py\n"+strings.Repeat("1\n", 100), uint16(17), byte(2))
	f.Add("Here:\n```go\n"+strings.Repeat("fmt.Println(\"line\")\n", 300)+"```\nDone.", uint16(0), byte(0))
	f.Fuzz(func(t *testing.T, text string, maxSeed uint16, outcome byte) {
		max := minSplitMax + int(maxSeed%300)
		parts := Split(text, max)
		checkSplit(t, text, max, parts)

		r := Reply{Text: text, Outcome: []string{"completed", "interrupted", "error", "odd"}[outcome%4],
			Truncated: outcome&4 != 0, FailureCode: "agent_not_installed", FailureMessage: text, Agent: "agent_1"}
		// Slack at the fuzzed size; Discord at the fuzzed size and at its real 2,000.
		for _, c := range []struct {
			parts []string
			max   int
		}{{slackFormat(r, max), max}, {Discord.FormatReply(r, max), max}, {Discord.FormatReply(r, 2000), 2000}} {
			for k, p := range c.parts {
				if n := utf8.RuneCountInString(p); n > c.max || strings.TrimSpace(p) == "" {
					t.Fatalf("formatReply part %d: expected 1..%d visible runes, got %d", k, c.max, n)
				}
				if n := fenceToggles(p); n%2 != 0 {
					t.Fatalf("formatReply part %d: expected balanced fences, got %d", k, n)
				}
			}
		}
	})
}
