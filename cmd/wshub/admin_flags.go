package main

// Reading the operator commands' command lines: the check of what is required, flags
// that say whether they were given, and flags that refuse a value they cannot take.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// parse parses flags, refuses stray arguments and checks the required ones. Its
// errors but flag.ErrHelp (-h, --help) are a command line the command cannot read.
func parse(fs *flag.FlagSet, args []string, required ...string) error {
	fs.SetOutput(io.Discard) // the error is said once, by admin
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return fmt.Errorf("--%s is required", name)
		}
	}
	return nil
}

// exactlyOne checks that one of names, and only one, was given a value (none: no
// check).
func exactlyOne(fs *flag.FlagSet, names []string) error {
	if len(names) == 0 {
		return nil
	}
	given := 0
	for _, name := range names {
		v := fs.Lookup(name).Value
		// A bool flag is given when true: false is its value unset.
		if b, ok := v.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v.String() == "true" {
				given++
			}
		} else if v.String() != "" {
			given++
		}
	}
	if given != 1 {
		return fmt.Errorf("give exactly one of --%s", strings.Join(names, ", --"))
	}
	return nil
}

// flagGiven reports whether the flag was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// splitIDs reads a comma-separated list of ids (empty: none).
func splitIDs(s string) []string {
	out := []string{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// optBool is a boolean flag that remembers whether it was given (--flag or --flag=BOOL).
type optBool struct{ v *bool }

func (o *optBool) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *optBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	o.v = &b
	return nil
}

func (o *optBool) IsBoolFlag() bool { return true }

// intIn is an integer flag held to a range: a value outside it is refused as the
// command line is read, as one that is no number is.
type intIn struct{ v, min, max int }

func (f *intIn) String() string {
	if f == nil {
		return ""
	}
	return strconv.Itoa(f.v)
}

func (f *intIn) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	if n < f.min || n > f.max {
		return fmt.Errorf("must be between %d and %d", f.min, f.max)
	}
	f.v = n
	return nil
}

// timeFlag is an RFC 3339 time flag; with orNone it also takes "none", to clear the
// time.
type timeFlag struct {
	t            *time.Time
	none, orNone bool
}

func (f *timeFlag) String() string {
	switch {
	case f == nil || f.t == nil && !f.none:
		return ""
	case f.none:
		return "none"
	}
	return f.t.Format(time.RFC3339)
}

func (f *timeFlag) Set(s string) error {
	if f.orNone && s == "none" {
		f.t, f.none = nil, true
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return errors.New("not an RFC 3339 time, such as 2030-01-31T00:00:00Z")
	}
	f.t, f.none = &t, false
	return nil
}

// optInt is an integer flag that says whether it was given.
type optInt struct{ v *int }

func (o *optInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	o.v = &n
	return nil
}
