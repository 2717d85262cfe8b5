package chat

// Splitting long text into posts under a platform's size without breaking what the
// text means: code blocks, entities, grapheme clusters. Standard library only.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// minSplitMax is the smallest max Split works with: a part that continues a
	// code block needs room for the re-opening line (up to 3+maxInfoRunes+1 runes), the
	// closing fence (4) and some text. A smaller max is raised to it.
	minSplitMax = 64

	emptyReplyText = "(empty reply)"

	// maxInfoRunes: the longest info string (```go) that is repeated when a code block
	// continues in the next part. Longer or unusual ones are not repeated.
	maxInfoRunes = 32
	// maxAmpEntity and maxAngleEntity: the longest &name; (name length) and <...>
	// (inner length) treated as one entity that is not cut.
	maxAmpEntity   = 8
	maxAngleEntity = 1024

	fenceMark = "```"
)

// Split splits text into posts of at most max runes (max below minSplitMax is
// raised to it). Text without visible characters gives the single part "(empty reply)";
// no part is empty or only whitespace.
//
// It breaks, in order of preference, after a blank line, after a newline, after a space,
// taking the latest such point in the second half of the room; failing those, at the
// latest point that cuts nothing. It never cuts a rune, an entity (&amp; or <@U123> /
// <https://x|label>, up to 1,024 runes), a grapheme extension (combining mark, ZWJ,
// variation selector, skin tone, flag pair) or \r\n, unless one of those alone is longer
// than the room. Code fences follow Slack's reading: every ``` in a run of backticks
// opens or closes a code block. A part that ends inside a block gets a closing ``` on a
// line of its own, and the next part re-opens it with ``` plus the info string of the
// opening line when it had a short one (```go); a block the text leaves open is closed
// at the end. These added fences count toward max, so every part has an even number of
// fences. Concatenating the parts without the added fence lines gives the text back
// (invalid UTF-8 read as U+FFFD), except whitespace-only stretches between parts that
// are dropped.
func Split(text string, max int) []string {
	if max < minSplitMax {
		max = minSplitMax
	}
	if strings.TrimSpace(text) == "" {
		return []string{emptyReplyText}
	}
	l := newLayout([]rune(text))
	n := len(l.r)
	var parts []string
	for pos := 0; pos < n; {
		prefix := ""
		if id := l.open[pos]; id >= 0 {
			prefix = fenceMark + l.fences[id].info + "\n"
		}
		room := max - utf8.RuneCountInString(prefix)
		end := n
		if end-pos+l.closeLen(end) > room {
			end = l.cut(pos, room)
		}
		content := string(l.r[pos:end])
		suffix := ""
		if l.open[end] >= 0 {
			suffix = fenceMark
			if l.r[end-1] != '\n' {
				suffix = "\n" + fenceMark
			}
		}
		if prefix != "" || suffix != "" || strings.TrimSpace(content) != "" {
			parts = append(parts, prefix+content+suffix)
		}
		pos = end
	}
	return parts
}

// Flags of a cut position (the point between runes c-1 and c).
const (
	cutForbidden uint8 = 1 << iota // never: inside a fence, or a cut that would read back ambiguously
	cutEntity                      // inside &name; or <...>
	cutCluster                     // inside a grapheme cluster, \r\n or a run of backticks
)

// Classes of a cut position with no flags, worst to best.
const (
	clsNone    = iota
	clsDemoted // would leave a code block with nothing in it on one side
	clsOther
	clsSpace
	clsNewline
	clsBlank
	numClasses
)

type fence struct {
	info      string // repeated on re-opening
	from      int    // where the body may start (after the opening line's info string)
	bodyStart int    // first visible rune of the block; cuts at or before it are demoted
	bodyEnd   int    // end of the block's last visible rune; cuts at or after it are demoted
}

// layout holds, for each cut position 0..len(r), what splitting there means.
type layout struct {
	r      []rune
	flags  []uint8
	class  []uint8
	open   []int32 // the fence open at the position (index into fences), or -1
	fences []fence
}

func newLayout(r []rune) *layout {
	n := len(r)
	l := &layout{r: r, flags: make([]uint8, n+1), class: make([]uint8, n+1), open: make([]int32, n+1)}
	l.classify()
	l.markEntities()
	l.markClusters()
	l.scanFences()
	for c := 1; c < n; c++ {
		id := l.open[c]
		if id < 0 {
			continue
		}
		// Keep the added closing fence distinct from the text that follows: no cut
		// just before a backtick, or between a character and the newline after it.
		if r[c] == '`' || (r[c] == '\n' && r[c-1] != '\n') {
			l.flags[c] |= cutForbidden
		}
		if f := l.fences[id]; c <= f.bodyStart || c >= f.bodyEnd {
			l.class[c] = min(l.class[c], clsDemoted)
		}
	}
	return l
}

func (l *layout) classify() {
	r := l.r
	lineStart, blank := 0, true
	for c := 1; c <= len(r); c++ {
		prev := r[c-1]
		switch {
		case prev == '\n':
			if blank && lineStart > 0 {
				l.class[c] = clsBlank
			} else {
				l.class[c] = clsNewline
			}
			lineStart, blank = c, true
			continue
		case isSoftBreak(prev):
			l.class[c] = clsSpace
		default:
			l.class[c] = clsOther
		}
		if prev != ' ' && prev != '\t' && prev != '\r' {
			blank = false
		}
	}
}

// isSoftBreak: a cut after r is a word break (ASCII and ideographic spaces, CJK
// sentence punctuation). No-break spaces are not.
func isSoftBreak(r rune) bool {
	switch r {
	case ' ', '\t', '\u3000', '。', '、', '，', '！', '？', '；', '：':
		return true
	}
	return false
}

func (l *layout) markEntities() {
	r, n := l.r, len(l.r)
	for i := 0; i < n; i++ {
		j := i + 1
		switch r[i] {
		case '&':
			for j < n && j-i <= maxAmpEntity && isEntityChar(r[j]) {
				j++
			}
			if j < n && j > i+1 && r[j] == ';' {
				l.mark(i+1, j, cutEntity)
			}
		case '<':
			for j < n && j-i <= maxAngleEntity && r[j] != '<' && r[j] != '>' && r[j] != '\n' {
				j++
			}
			if j < n && j > i+1 && r[j] == '>' {
				l.mark(i+1, j, cutEntity)
			}
		}
	}
}

// mark sets flag on cut positions from..to inclusive.
func (l *layout) mark(from, to int, flag uint8) {
	for c := from; c <= to; c++ {
		l.flags[c] |= flag
	}
}

func isEntityChar(r rune) bool {
	return r == '#' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

func (l *layout) markClusters() {
	r := l.r
	ri := 0 // regional indicators in a row ending at c-1
	for c := 1; c < len(r); c++ {
		a, b := r[c-1], r[c]
		if isRegional(a) {
			ri++
		} else {
			ri = 0
		}
		if (a == '\r' && b == '\n') || a == '\u200d' || isExtend(b) || (ri%2 == 1 && isRegional(b)) {
			l.flags[c] |= cutCluster
		}
	}
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// isExtend: runes that belong to the grapheme cluster before them.
func isExtend(r rune) bool {
	switch {
	case r < 0x300:
		return false
	case r == '\u200d', r >= 0xFE00 && r <= 0xFE0F, r >= 0x1F3FB && r <= 0x1F3FF, r >= 0xE0020 && r <= 0xE007F:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

// scanFences computes open[] under Slack's reading of ```: in a run of k backticks,
// each complete group of three toggles the code block. Cuts inside a run are allowed
// only between such groups (and only as a last resort).
func (l *layout) scanFences() {
	r, n := l.r, len(l.r)
	cur := int32(-1)
	lineBlank := true // the current line so far is only spaces and tabs
	lastVisible := 0  // end of the last visible rune inside the current block
	for i := 0; i < n; {
		l.open[i] = cur
		if r[i] != '`' {
			if r[i] == '\n' {
				lineBlank = true
				i++
				continue
			}
			if r[i] != ' ' && r[i] != '\t' {
				lineBlank = false
			}
			if cur >= 0 && i >= l.fences[cur].from && !unicode.IsSpace(r[i]) {
				l.visible(cur, i, i+1, &lastVisible)
			}
			i++
			continue
		}
		j := i
		for j < n && r[j] == '`' {
			j++
		}
		k, before, mid := j-i, cur, int32(-1)
		for o := 1; o < k; o++ {
			c := i + o
			if o%3 != 0 {
				l.flags[c] |= cutForbidden
				l.open[c] = -1
				continue
			}
			l.flags[c] |= cutCluster
			switch {
			case (o/3)%2 == 0:
				l.open[c] = before
			case before >= 0:
				l.open[c] = -1
			default:
				if mid < 0 {
					mid = l.newFence("", -1)
					l.fences[mid].bodyEnd = n + 1
				}
				l.open[c] = mid
			}
		}
		switch {
		case (k/3)%2 == 0:
			if cur >= 0 && i >= l.fences[cur].from {
				l.visible(cur, i, j, &lastVisible)
			}
		case cur >= 0: // closes
			f := &l.fences[cur]
			if f.bodyStart > i {
				f.bodyStart = i
			}
			f.bodyEnd = max(lastVisible, f.bodyStart)
			cur = -1
		default: // opens
			from := j
			info := ""
			if lineBlank { // at most once a line
				e := j
				for e < n && r[e] != '\n' {
					e++
				}
				if w := strings.TrimSpace(string(r[j:e])); w == "" || isInfo(w) {
					info, from = w, e
				}
			}
			cur = l.newFence(info, from)
			lastVisible = from
		}
		i, lineBlank = j, false
	}
	l.open[n] = cur
	if cur >= 0 {
		l.fences[cur].bodyEnd = n + 1 // left open: closed at the end, nothing to demote
		if l.fences[cur].bodyStart > n {
			l.fences[cur].bodyStart = n
		}
	}
}

// visible records visible text [from, to) inside fence id.
func (l *layout) visible(id int32, from, to int, lastVisible *int) {
	f := &l.fences[id]
	if f.bodyStart > len(l.r) {
		f.bodyStart = from
	}
	*lastVisible = to
}

// newFence adds a fence whose body is searched for from index from; bodyStart stays
// past the end until visible text is seen.
func (l *layout) newFence(info string, from int) int32 {
	l.fences = append(l.fences, fence{info: info, from: from, bodyStart: len(l.r) + 1, bodyEnd: len(l.r) + 1})
	return int32(len(l.fences) - 1)
}

// isInfo: an info string worth repeating (a language name such as go, c++, objective-c).
func isInfo(s string) bool {
	if len(s) > maxInfoRunes {
		return false
	}
	for _, r := range s {
		if !isEntityChar(r) && r != '_' && r != '+' && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// closeLen is the length of the closing fence a part ending at c needs.
func (l *layout) closeLen(c int) int {
	switch {
	case l.open[c] < 0:
		return 0
	case c > 0 && l.r[c-1] == '\n':
		return len(fenceMark)
	}
	return len(fenceMark) + 1
}

// cut picks the end of a part that starts at pos with room runes for its text and
// closing fence.
func (l *layout) cut(pos, room int) int {
	limit := min(len(l.r), pos+room)
	var best [numClasses]int
	lastClustered, lastAny := 0, 0
	for c := pos + 1; c <= limit; c++ {
		f := l.flags[c]
		if f&cutForbidden != 0 || c-pos+l.closeLen(c) > room {
			continue
		}
		switch {
		case f == 0:
			best[l.class[c]] = c
		case f&cutEntity == 0:
			lastClustered = c
		default:
			lastAny = c
		}
	}
	half := pos + room/2
	for _, cls := range []int{clsBlank, clsNewline, clsSpace} {
		if best[cls] > half {
			return best[cls]
		}
	}
	if c := max(best[clsBlank], best[clsNewline], best[clsSpace], best[clsOther]); c > 0 {
		return c
	}
	for _, c := range []int{best[clsDemoted], lastClustered, lastAny} {
		if c > 0 {
			return c
		}
	}
	// Unreachable with room >= minSplitMax-(3+maxInfoRunes+1): forbidden positions
	// never come more than two in a row. Make progress regardless.
	c := pos + 1
	for c < len(l.r) && l.flags[c]&cutForbidden != 0 {
		c++
	}
	return c
}
