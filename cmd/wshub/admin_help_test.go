package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runQuiet runs wshub in-process with no database to reach: what it answers must not
// need one.
func runQuiet(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	env := testEnviron("DATABASE_URL")
	var out, errb bytes.Buffer
	code = run(context.Background(), args, env, &out, &errb)
	return code, out.String(), errb.String()
}

// TestAdminHelpWalksTheTable: every operator command answers --help and -h with its
// usage on stdout and exit 0; its usage line names every flag it defines, required
// ones bare and optional ones in brackets; and an unknown flag, an extra argument and
// a missing required flag are usage errors (exit 2). None of it needs a database.
func TestAdminHelpWalksTheTable(t *testing.T) {
	t.Parallel()
	for _, c := range adminCommands {
		args := append([]string{"admin"}, strings.Fields(c.name)...)
		for _, h := range []string{"--help", "-h"} {
			code, out, errs := runQuiet(t, append(args, h)...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: wshub admin "+c.name) {
				t.Errorf("wshub admin %s %s: expected its usage on stdout and exit 0, got %d: %q %q", c.name, h, code, out, errs)
			}
		}
		_, out, _ := runQuiet(t, append(args, "--help")...)
		usage, _, _ := strings.Cut(out, "\n\n") // the usage line, wrapped
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			at := regexp.MustCompile(`--` + regexp.QuoteMeta(f.Name) + `([ =\]]|$)`).FindStringIndex(usage)
			if at == nil {
				t.Errorf("wshub admin %s: the usage does not mention --%s:\n%s", c.name, f.Name, usage)
				return
			}
			optional := strings.Count(usage[:at[0]], "[") > strings.Count(usage[:at[0]], "]")
			if required := slices.Contains(c.required, f.Name) || slices.Contains(c.oneOf, f.Name); required == optional {
				t.Errorf("wshub admin %s: --%s is required=%v, but the usage shows it optional=%v:\n%s", c.name, f.Name, required, optional, usage)
			}
			if !strings.Contains(out, "  --"+f.Name+" ") {
				t.Errorf("wshub admin %s --help: expected --%s described among the flags:\n%s", c.name, f.Name, out)
			}
		})
		for _, name := range c.required {
			if fs.Lookup(name) == nil {
				t.Errorf("wshub admin %s: requires --%s, which it does not define", c.name, name)
			}
		}
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--no-such-flag"}, "no-such-flag"},
			{[]string{"extra"}, `unexpected argument "extra"`},
		} {
			if code, out, errs := runQuiet(t, append(args, tt.args...)...); code != 2 || out != "" || !strings.Contains(errs, tt.want) {
				t.Errorf("wshub admin %s %v: expected exit 2 with %q on stderr, got %d: %q %q", c.name, tt.args, tt.want, code, out, errs)
			}
		}
		if len(c.required) > 0 {
			want := "--" + c.required[0] + " is required"
			if code, _, errs := runQuiet(t, args...); code != 2 || !strings.Contains(errs, want) {
				t.Errorf("wshub admin %s: expected exit 2 with %q, got %d: %q", c.name, want, code, errs)
			}
		}
	}
}

// The list and each group's list name every command; a group alone is a usage error.
func TestAdminUsageListsEveryCommand(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"--help", "-h", "help"} {
		code, out, _ := runQuiet(t, "admin", h)
		if code != 0 {
			t.Errorf("wshub admin %s: expected exit 0, got %d", h, code)
		}
		for _, c := range adminCommands {
			listed := `\n  ` + c.name + `[ \n]`
			if group, verb, twoWords := strings.Cut(c.name, " "); twoWords { // perhaps sharing a line: "a|b"
				listed = `\n  ` + group + ` ([a-z]+\|)*` + verb + `[ |\n]`
			}
			if !regexp.MustCompile(listed).MatchString(out) {
				t.Errorf("wshub admin %s: expected %q listed, got:\n%s", h, c.name, out)
			}
		}
	}
	for _, c := range adminCommands {
		group, verb, twoWords := strings.Cut(c.name, " ")
		if !twoWords {
			continue
		}
		code, out, _ := runQuiet(t, "admin", group, "--help")
		if code != 0 || !strings.HasPrefix(out, "usage: wshub admin "+group+" <command>") || !strings.Contains(out, verb) {
			t.Errorf("wshub admin %s --help: expected the group's commands with exit 0, got %d:\n%s", group, code, out)
		}
		if code, _, errs := runQuiet(t, "admin", group); code != 2 || !strings.Contains(errs, "usage: wshub admin "+group) {
			t.Errorf("wshub admin %s: expected the group's commands on stderr with exit 2, got %d: %q", group, code, errs)
		}
	}
}

// The commands configured by the environment alone (runtime, serve, ...) take no
// arguments: one given is a usage error, exit 2, not dropped.
func TestServerCommandsRefuseArguments(t *testing.T) {
	t.Parallel()
	for name := range serverUsage {
		for _, arg := range []string{"--no-such-flag", "extra"} {
			code, out, errs := runQuiet(t, name, arg)
			if code != 2 || out != "" || !strings.Contains(errs, `unexpected argument "`+arg+`"`) || !strings.Contains(errs, "usage: wshub "+name) {
				t.Errorf("wshub %s %s: expected exit 2 with its usage on stderr, got %d: %q %q", name, arg, code, out, errs)
			}
		}
	}
}
