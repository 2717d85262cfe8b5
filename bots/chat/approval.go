package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wshub/wshub/core"
)

// An approval question shows exactly what will run: the tool's input, verbatim, in a
// code block, with control and invisible characters made visible (a tab as \t, a
// zero-width space as \u200b, a right-to-left override as \u202e) and spaces kept as
// they are, however many. What does not fit a message is said in words, and the
// whole input goes along as a file (the platform attaches it).

// Question is an approval's message, ready for a platform.
type Question struct {
	// Text is the message: what is asked, the code block, and, when the block was
	// cut, how much more there is.
	Text string
	// Cut reports that Text does not hold the whole of what will run: attach File.
	Cut bool
	// File is the whole input, for the attachment: FileName holds FileBody.
	FileName string
	FileBody []byte
}

// ApprovalAsk is what a question is made from (a core.ChatNotice's approval fields).
type ApprovalAsk struct {
	ApprovalID, Tool, Summary string
	Input                     json.RawMessage
	InputSHA256               string
}

// AskOf takes the approval fields of a notice.
func AskOf(n core.ChatNotice) ApprovalAsk {
	return ApprovalAsk{ApprovalID: n.ApprovalID, Tool: n.Tool, Summary: n.Summary, Input: n.Input, InputSHA256: n.InputSHA256}
}

// approvalView is what an ask shows: a headline ("run Bash:") and the text to show
// verbatim (the command; the input as JSON for other tools; the agent's summary when
// it gave no input).
func approvalView(a ApprovalAsk) (head, body string, whole bool) {
	tool := strings.TrimSpace(a.Tool)
	if tool == "" {
		tool = "a step"
	}
	if len(a.Input) == 0 {
		// Only the agent's own description: a cut one (…) is not the whole command.
		return "run " + tool, a.Summary, !strings.HasSuffix(a.Summary, "…")
	}
	var text string
	if json.Unmarshal(a.Input, &text) == nil {
		return "run " + tool, text, true // a command agent's input given as the command itself
	}
	var in map[string]any
	d := json.NewDecoder(bytes.NewReader(a.Input))
	d.UseNumber()
	if d.Decode(&in) == nil {
		if head, body, ok := fileChange(tool, in); ok {
			return head, body, true
		}
		if head, cmd, ok := commandView(tool, in); ok {
			return head, cmd, true
		}
	}
	var b bytes.Buffer
	if json.Indent(&b, a.Input, "", "  ") != nil {
		return "use " + tool, string(a.Input), true
	}
	return "use " + tool + " with", b.String(), true
}

// commandView shows a command tool's input (Claude Code's Bash: command,
// description, timeout, run_in_background) as the command, its settings in the
// headline. ok is false for an input with any other key (then it shows as JSON).
func commandView(tool string, in map[string]any) (head, cmd string, ok bool) {
	cmd, ok = in["command"].(string)
	if !ok {
		return "", "", false
	}
	var settings []string
	for k, v := range in {
		switch k {
		case "command", "description":
		case "timeout":
			settings = append(settings, fmt.Sprintf("timeout %v ms", v))
		case "run_in_background":
			if v == true {
				settings = append(settings, "in the background")
			}
		default:
			return "", "", false
		}
	}
	slices.Sort(settings)
	head = "run " + tool
	if len(settings) > 0 {
		head += " (" + strings.Join(settings, ", ") + ")"
	}
	return head, cmd, true
}

// fileChange shows Claude Code's file tools as the change they make: Edit and
// MultiEdit as a unified diff of each edit, Write as the file's new content. ok is
// false for other tools, or an input of another shape (then it shows as JSON).
func fileChange(tool string, in map[string]any) (head, body string, ok bool) {
	path, _ := in["file_path"].(string)
	if path == "" {
		return "", "", false
	}
	// The path shows in the headline too, where it must not hide anything either.
	shownPath := strings.Join(visibleRunes(path), "")
	str := func(m map[string]any, k string) (string, bool) { v, ok := m[k].(string); return v, ok }
	// Only the keys the tool takes: anything else could change what runs unseen.
	only := func(m map[string]any, keys ...string) bool {
		for k := range m {
			if !slices.Contains(keys, k) {
				return false
			}
		}
		return true
	}
	switch tool {
	case "Write":
		content, ok := str(in, "content")
		if !ok || !only(in, "file_path", "content") {
			return "", "", false
		}
		return "write the file " + shownPath + ", whole, as", content, true
	case "Edit":
		old, ok1 := str(in, "old_string")
		nw, ok2 := str(in, "new_string")
		all, _ := in["replace_all"].(bool)
		if !ok1 || !ok2 || !only(in, "file_path", "old_string", "new_string", "replace_all") {
			return "", "", false
		}
		head = "edit " + shownPath
		if all {
			head += " (every occurrence)"
		}
		return head, unifiedDiff(path, old, nw), true
	case "MultiEdit":
		edits, ok := in["edits"].([]any)
		if !ok || !only(in, "file_path", "edits") {
			return "", "", false
		}
		var b strings.Builder
		for i, e := range edits {
			m, ok := e.(map[string]any)
			old, ok1 := str(m, "old_string")
			nw, ok2 := str(m, "new_string")
			if !ok || !ok1 || !ok2 || !only(m, "old_string", "new_string", "replace_all") {
				return "", "", false
			}
			if all, _ := m["replace_all"].(bool); all {
				fmt.Fprintf(&b, "# edit %d, every occurrence\n", i+1)
			} else {
				fmt.Fprintf(&b, "# edit %d\n", i+1)
			}
			b.WriteString(unifiedDiff(path, old, nw))
		}
		return fmt.Sprintf("make %d %s to %s", len(edits), plural(len(edits), "edit", "edits"), shownPath), b.String(), true
	}
	return "", "", false
}

// visibleRunes splits s into what shows for each of its characters: itself, or an
// escape for a character that would not show as itself (controls but the newline,
// invisible and format characters, unusual spaces). A backslash shows as itself.
func visibleRunes(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == ' ':
			out = append(out, string(r))
		case r == '\t':
			out = append(out, `\t`)
		case r == '\r':
			out = append(out, `\r`)
		case r == utf8.RuneError:
			out = append(out, `\ufffd`)
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zs, r) ||
			unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || unicode.Is(unicode.Co, r) ||
			unicode.In(r, unicode.Variation_Selector, unicode.Noncharacter_Code_Point) || isFiller(r):
			if r > 0xFFFF {
				out = append(out, fmt.Sprintf(`\U%08x`, r))
			} else {
				out = append(out, fmt.Sprintf(`\u%04x`, r))
			}
		default:
			out = append(out, string(r))
		}
	}
	return out
}

// isFiller: letters that render as blank (Hangul fillers, braille blank).
func isFiller(r rune) bool {
	switch r {
	case '\u115f', '\u1160', '\u3164', '\uffa0', '\u2800':
		return true
	}
	return false
}

// codeBlock wraps text in a code block; a run of three backticks inside, which would
// end the block, gets a zero-width space after each backtick but the last (an
// invisible character the agent cannot have written: its own show as \u200b).
func codeBlock(text string) string {
	for strings.Contains(text, "```") {
		text = strings.ReplaceAll(text, "``", "`\u200b`")
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fenceMark + "\n" + text + fenceMark
}

// Question is the approval's message in at most limit runes (the platform's limit
// for a message with buttons, less room for a decision line under it).
func (p Platform) Question(a ApprovalAsk, limit int) Question {
	head, body, whole := approvalView(a)
	body = strings.TrimRight(body, "\n")
	shown := visibleRunes(body)
	intro := fmt.Sprintf("%s The agent asks to %s:", p.Lock, p.escapeLabel(head))
	ask := "Allow it?"
	if !whole {
		ask = "The agent gave only this summary, cut short: the rest of what would run is not known. Allow it?"
	}
	text := func(n int) string {
		block := codeBlock(p.escape(strings.Join(shown[:n], "")))
		if n == len(shown) {
			return intro + "\n" + block + "\n" + ask
		}
		more := len(shown) - n
		return fmt.Sprintf("%s\n%s\n%d more %s: see the attached file, which holds the whole input%s. %s",
			intro, block, more, plural(more, "character", "characters"), hashNote(a.InputSHA256), ask)
	}
	q := Question{Text: text(len(shown))}
	if utf8.RuneCountInString(q.Text) > limit {
		// The longest head of the view that fits (escapes make the size of a head
		// not a simple count).
		lo, hi := 0, len(shown)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if utf8.RuneCountInString(text(mid)) <= limit {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		q.Text, q.Cut = text(lo), true
	}
	if q.Cut && len(a.Input) > 0 {
		q.FileName, q.FileBody = "approval-"+a.ApprovalID+".json", a.Input
	}
	return q
}

// hashNote names the input's hash, so the file can be checked against what an Allow
// lets run.
func hashNote(sum string) string {
	if len(sum) < 12 {
		return ""
	}
	return " (sha256 " + sum[:12] + "…)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Decided is an approval's question with how it was decided under it.
func (p Platform) Decided(question string, status core.ApprovalStatus, who string) string {
	return strings.TrimSpace(question) + "\n" + p.DecisionLine(status, who)
}

// DecidedText is an approval's question with how it was decided under it, naming
// who decided (a member by mention).
func (p Platform) DecidedText(question string, status core.ApprovalStatus, by, name string) string {
	return p.Decided(question, status, p.DecidedBy(by, name))
}
