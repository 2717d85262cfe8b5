package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// An approval shows exactly what will run: the tool's input, verbatim, with control
// and invisible characters made visible (a tab as \t, a zero-width space as \u200b, a
// right-to-left override as \u202e) and spaces kept as they are, however many. The
// front-ends (chat questions, the app's page) draw this view; what an Allow lets run
// is the input its hash names, so the view must not hide any of it.

// ViewAsk is what an ask shows a person who decides it: a headline ("run Bash") and
// the text to show verbatim (the command; the change of a file tool; the input as JSON
// for other tools; the agent's summary when it gave no input). Whole is false when
// that is only the agent's summary, cut short. Chat and the app both show this.
func ViewAsk(tool, summary string, input json.RawMessage) AskView {
	head, body, whole := askView(tool, summary, input)
	return AskView{Head: head, Body: body, Whole: whole}
}

// AskView is an ask as it is shown.
type AskView struct {
	Head, Body string
	Whole      bool
}

func askView(tool, summary string, input json.RawMessage) (head, body string, whole bool) {
	tool = strings.TrimSpace(tool)
	if tool == "" {
		tool = "a step"
	}
	if len(input) == 0 {
		// Only the agent's own description: a cut one (…) is not the whole command.
		return "run " + tool, summary, !strings.HasSuffix(summary, "…")
	}
	var text string
	if json.Unmarshal(input, &text) == nil {
		return "run " + tool, text, true // a command agent's input given as the command itself
	}
	var in map[string]any
	d := json.NewDecoder(bytes.NewReader(input))
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
	if json.Indent(&b, input, "", "  ") != nil {
		return "use " + tool, string(input), true
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
	shownPath := strings.Join(VisibleRunes(path), "")
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
		return fmt.Sprintf("make %d %s to %s", len(edits), Plural(len(edits), "edit", "edits"), shownPath), b.String(), true
	}
	return "", "", false
}

// VisibleRunes splits s into what shows for each of its characters: itself, or an
// escape for a character that would not show as itself (controls but the newline,
// invisible and format characters, unusual spaces). A backslash shows as itself.
func VisibleRunes(s string) []string {
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

// Plural is one or many, by n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
