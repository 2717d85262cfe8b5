package main

// The operator commands' usage, made from adminCommands: the list (wshub admin
// --help), a group's (wshub admin project --help) and a command's own, with its flags.

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

const adminOutputNote = "Output is JSON on stdout; errors go to stderr with a non-zero exit (2 for a usage error).\n"

// usageWidth is where usage lines wrap, so that a terminal does not break them mid-flag.
const usageWidth = 120

// aboutWidth is where a command's description wraps.
const aboutWidth = 90

// adminUsage lists every operator command.
func adminUsage() string {
	return "usage: wshub admin <command>; --help on each for its flags\n\n" + adminList("") + "\n" + adminOutputNote
}

// adminGroupUsage lists a group's commands ("project"); "" for a name that is not a
// group.
func adminGroupUsage(group string) string {
	if !slices.ContainsFunc(adminCommands, func(c adminCommand) bool { return strings.HasPrefix(c.name, group+" ") }) {
		return ""
	}
	return fmt.Sprintf("usage: wshub admin %s <command>; --help on each for its flags\n\n%s\n%s", group, adminList(group), adminOutputNote)
}

// adminList is the usage lines of group's commands ("": all), indented and wrapped.
func adminList(group string) string {
	var b strings.Builder
	for _, l := range adminLines(group) {
		b.WriteString(wrapUsage("  "+l.names, l.synopsis, 2+len(l.names)+1))
	}
	return b.String()
}

// adminUsageLines are the commands as the usage lists them, one line each, unwrapped.
// The README lists the same lines (a test checks).
func adminUsageLines() []string {
	var out []string
	for _, l := range adminLines("") {
		out = append(out, strings.TrimSpace(l.names+" "+l.synopsis))
	}
	return out
}

// usageLine is a line of the list: commands and the flags they take.
type usageLine struct{ names, synopsis string }

// adminLines are the lines listing group's commands ("": all). Neighbours of a group
// that take the same flags share a line ("workspace archive|unarchive|delete").
func adminLines(group string) []usageLine {
	var lines []usageLine
	prev := ""
	for _, c := range adminCommands {
		g, verb, twoWords := strings.Cut(c.name, " ")
		if group != "" && !strings.HasPrefix(c.name, group+" ") {
			continue
		}
		if n := len(lines); n > 0 && twoWords && strings.HasPrefix(prev, g+" ") && lines[n-1].synopsis == c.synopsis {
			lines[n-1].names += "|" + verb
		} else {
			lines = append(lines, usageLine{c.name, c.synopsis})
		}
		prev = c.name
	}
	return lines
}

// help is the command's --help: its usage line, what it does and its flags.
func (c adminCommand) help(fs *flag.FlagSet) string {
	var b strings.Builder
	head := "usage: wshub admin " + c.name
	b.WriteString(wrapUsage(head, c.synopsis, len(head)+1))
	b.WriteString("\n" + wrapWords(c.about, aboutWidth))
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	if len(flags) > 0 {
		b.WriteString("\nflags:\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, f := range flags {
			fmt.Fprintf(tw, "  --%s\t%s", f.Name, f.Usage)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				fmt.Fprintf(tw, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(tw)
		}
		_ = tw.Flush()
	}
	return b.String() + "\n" + adminOutputNote
}

// wrapUsage writes head and the synopsis on a line, breaking before an optional flag
// ("[--...") where the line would pass usageWidth; continuation lines are indented by
// indent.
func wrapUsage(head, synopsis string, indent int) string {
	line, col := head, len(head)
	for i, part := range strings.Split(synopsis, " [") {
		if i > 0 {
			part = "[" + part
		}
		if part == "" {
			continue
		}
		if i > 0 && col+1+len(part) > usageWidth {
			line += "\n" + strings.Repeat(" ", indent)
			col = indent
		} else {
			line += " "
			col++
		}
		line += part
		col += len(part)
	}
	return line + "\n"
}

// wrapWords breaks text into lines of at most width, between words.
func wrapWords(text string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(text) {
		if col > 0 && col+1+len(w) > width {
			b.WriteString("\n")
			col = 0
		} else if col > 0 {
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String() + "\n"
}
