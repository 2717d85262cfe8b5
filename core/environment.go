package core

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A project's environment: how a workspace gets ready before its first turn (design.md,
// "Environments"). It comes from the project's settings, else .wshub/environment.json
// at the workspace's base, else the supported subset of .devcontainer/devcontainer.json
// (environment_devcontainer.go). A file that cannot be used fails the workspace in
// words; it never falls back to a default silently.

// Where an environment came from (Environment.Source).
const (
	EnvironmentFromProject = "project settings"
	EnvironmentFile        = ".wshub/environment.json"
	DevcontainerFile       = ".devcontainer/devcontainer.json"
)

// Bounds of an environment: it is input from a repository, which anyone who can push
// to it writes.
const (
	// MaxEnvironmentFileBytes bounds an environment or devcontainer file read.
	MaxEnvironmentFileBytes = 256 << 10
	maxEnvScriptBytes       = 64 << 10
	maxEnvVars              = 100
	maxEnvValueBytes        = 32 << 10
	maxEnvCaches            = 10
	maxEnvCachePaths        = 20
	maxEnvImageBytes        = 255
	// DefaultSetupTimeout bounds a setup or update script when the environment names
	// no setupTimeout; MaxSetupTimeout is the most it may name.
	DefaultSetupTimeout = 10 * time.Minute
	MaxSetupTimeout     = 60 * time.Minute
)

// Environment is a resolved environment. The zero value (no source) is a bare checkout.
type Environment struct {
	// Source is where it came from ("" none).
	Source string `json:"-"`
	// Setup runs once per workspace, after checkout and before its first turn; Update
	// when a paused or archived workspace resumes. Both are shell scripts (sh -c).
	Setup  string `json:"setup,omitempty"`
	Update string `json:"update,omitempty"`
	// Env are variables every turn and script gets.
	Env map[string]string `json:"env,omitempty"`
	// Cache are the paths saved after setup and restored before the next one.
	Cache []CacheSpec `json:"cache,omitempty"`
	// Image is the workspace Pod's image (kubernetes); other providers report it as not
	// applied.
	Image string `json:"image,omitempty"`
	// SetupTimeout bounds each script (0: DefaultSetupTimeout).
	SetupTimeout EnvDuration `json:"setupTimeout,omitempty"`
	// Ignored names what a devcontainer file held that the hub does not honour, shown
	// with the setup so that nobody believes it applied.
	Ignored []string `json:"-"`
	// cacheRuns are the caches' keys, taken before setup, for their save after it.
	cacheRuns []cacheRun
}

// CacheSpec is one cached set of paths, keyed by the hash of its key files.
type CacheSpec struct {
	// Paths are relative to the checkout, or to the home directory when they start
	// with "~/".
	Paths []string `json:"paths"`
	// KeyFiles are files of the checkout (lockfiles) whose contents key the cache.
	KeyFiles []string `json:"keyFiles,omitempty"`
}

// EnvDuration is a setupTimeout: a number of seconds, or a Go duration ("15m").
type EnvDuration time.Duration

// UnmarshalJSON reads seconds or a duration string.
func (d *EnvDuration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		if v != float64(int64(v)) {
			return fmt.Errorf("setupTimeout in seconds must be a whole number")
		}
		*d = EnvDuration(time.Duration(v) * time.Second)
	case string:
		t, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("setupTimeout %q is neither seconds nor a duration such as \"15m\"", v)
		}
		*d = EnvDuration(t)
	default:
		return fmt.Errorf("setupTimeout must be seconds (a number) or a duration (\"15m\")")
	}
	return nil
}

// MarshalJSON writes whole seconds.
func (d EnvDuration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatInt(int64(time.Duration(d)/time.Second), 10)), nil
}

// Timeout is the bound of each of the environment's scripts.
func (e *Environment) Timeout() time.Duration {
	if e.SetupTimeout <= 0 {
		return DefaultSetupTimeout
	}
	return time.Duration(e.SetupTimeout)
}

// Empty reports whether the environment asks for nothing: the workspace is ready as
// soon as it is checked out.
func (e *Environment) Empty() bool {
	return e.Setup == "" && e.Update == "" && len(e.Env) == 0 && len(e.Cache) == 0 && e.Image == ""
}

// EnvList is the environment's variables as NAME=value, in name order.
func (e *Environment) EnvList() []string {
	names := make([]string, 0, len(e.Env))
	for n := range e.Env {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, n+"="+e.Env[n])
	}
	return out
}

// ParseEnvironment reads a .wshub/environment.json (or a project's settings, which
// have the same form). Unknown fields are refused: a misspelt "setpu" must not make a
// workspace silently skip its setup.
func ParseEnvironment(data []byte, source string) (*Environment, error) {
	if len(data) > MaxEnvironmentFileBytes {
		return nil, envErrorf(source, "is %d bytes; at most %d are read", len(data), MaxEnvironmentFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var e Environment
	if err := dec.Decode(&e); err != nil {
		return nil, envErrorf(source, "is not a valid environment: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, envErrorf(source, "holds more than one JSON value")
	}
	e.Source = source
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &e, nil
}

// jsonProblem words a decoding error without Go's type names.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf("%s must be %s", cmp.Or(te.Field, "the file"), jsonKind(te.Type.Kind().String()))
	case errors.As(err, &se):
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "a list"
	}
	return "a " + k
}

// envNamePattern is a variable name the shell can use.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// imagePattern is an OCI image reference: registry/path:tag@digest, loosely.
var imagePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9._/:@-]*[a-zA-Z0-9_.-])?$`)

// ReservedEnvName reports whether a variable is the hub's to set: an environment or
// a secret may not name it.
func ReservedEnvName(name string) bool {
	switch strings.ToUpper(name) {
	case "HOME", "PATH", "PWD", "SHELL", "USER", "LOGNAME":
		return true
	}
	return strings.HasPrefix(strings.ToUpper(name), "WSHUB_")
}

// Validate checks every field against its bounds and form, naming the first problem
// in words fit for the workspace's statusDetail.
func (e *Environment) Validate() error {
	src := cmp.Or(e.Source, "the environment")
	for _, s := range []struct{ name, v string }{{"setup", e.Setup}, {"update", e.Update}} {
		if len(s.v) > maxEnvScriptBytes {
			return envErrorf(src, "%s is %d bytes; at most %d", s.name, len(s.v), maxEnvScriptBytes)
		}
		if err := CheckText(s.name, s.v); err != nil {
			return envErrorf(src, "%s", err.(*Error).Detail)
		}
	}
	if len(e.Env) > maxEnvVars {
		return envErrorf(src, "env has %d variables; at most %d", len(e.Env), maxEnvVars)
	}
	for n, v := range e.Env {
		switch {
		case !envNamePattern.MatchString(n):
			return envErrorf(src, "env name %q is not a variable name (letters, digits and _)", cut(n, 60))
		case ReservedEnvName(n):
			return envErrorf(src, "env may not set %s: the hub sets it", n)
		case len(v) > maxEnvValueBytes:
			return envErrorf(src, "env %s is %d bytes; at most %d", n, len(v), maxEnvValueBytes)
		case CheckText("env "+n, v) != nil:
			return envErrorf(src, "env %s holds a NUL character or is not UTF-8", n)
		}
	}
	if len(e.Cache) > maxEnvCaches {
		return envErrorf(src, "cache has %d entries; at most %d", len(e.Cache), maxEnvCaches)
	}
	for i := range e.Cache {
		c := &e.Cache[i]
		if len(c.Paths) == 0 {
			return envErrorf(src, "cache entry %d has no paths", i+1)
		}
		if len(c.Paths) > maxEnvCachePaths || len(c.KeyFiles) > maxEnvCachePaths {
			return envErrorf(src, "cache entry %d names more than %d paths or key files", i+1, maxEnvCachePaths)
		}
		for j, p := range c.Paths {
			clean, err := cleanCachePath(p, true)
			if err != nil {
				return envErrorf(src, "cache entry %d: path %q %s", i+1, cut(p, 100), err)
			}
			c.Paths[j] = clean
		}
		for j, p := range c.KeyFiles {
			clean, err := cleanCachePath(p, false)
			if err != nil {
				return envErrorf(src, "cache entry %d: key file %q %s", i+1, cut(p, 100), err)
			}
			c.KeyFiles[j] = clean
		}
	}
	if e.Image != "" && (len(e.Image) > maxEnvImageBytes || !imagePattern.MatchString(e.Image)) {
		return envErrorf(src, "image %q is not an image reference such as node:22 or ghcr.io/org/img:tag", cut(e.Image, 100))
	}
	if t := time.Duration(e.SetupTimeout); t < 0 || t > MaxSetupTimeout || t > 0 && t < time.Second {
		return envErrorf(src, "setupTimeout must be between 1 s and %s", MaxSetupTimeout)
	}
	return nil
}

// cleanCachePath checks a cache path (home: "~/" is allowed) or key file: relative,
// inside the checkout or home, never .git.
func cleanCachePath(p string, home bool) (string, error) {
	rest, inHome := strings.CutPrefix(p, "~/")
	if inHome && !home {
		return "", fmt.Errorf("must be a file of the checkout")
	}
	switch {
	case rest == "" || strings.IndexByte(rest, 0) >= 0 || len(p) > 1024:
		return "", fmt.Errorf("is empty or not a path")
	case path.IsAbs(rest) || strings.HasPrefix(rest, "~"):
		return "", fmt.Errorf("must be relative to the checkout or start with ~/")
	}
	clean := path.Clean(rest)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("leaves the checkout or home")
	}
	if !inHome && (clean == ".git" || strings.HasPrefix(clean, ".git/")) {
		return "", fmt.Errorf("is inside .git")
	}
	if inHome {
		return "~/" + clean, nil
	}
	return clean, nil
}

// envErrorf is the refusal of an environment: a *SetupError with the reason in words,
// which fails the workspace setup_failed:environment_invalid.
func envErrorf(source, format string, args ...any) *SetupError {
	return &SetupError{StatusCode: FailureStatus(FailureSetup, ReasonEnvironmentInvalid),
		Detail: source + " " + fmt.Sprintf(format, args...)}
}

// cut shortens s for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// ErrFileTooLarge: a file read with a bound holds more than the bound.
var ErrFileTooLarge = errors.New("file too large")

// EnvironmentFiles reads the files an environment may come from, at a workspace's base
// in its project's mirror.
type EnvironmentFiles interface {
	// ReadFileAt returns the file at path in the commit ref names (a branch, tag or
	// commit, as a workspace's baseRef), reading at most max bytes: ok is false when
	// there is no such regular file (a symlink is none), and a larger file is an error.
	ReadFileAt(ctx context.Context, p *Project, ref, path string, max int64) (data []byte, ok bool, err error)
	// StandardizeJSONC makes JSON with comments and trailing commas (as the Dev
	// Container spec allows) plain JSON, saying where it is not.
	StandardizeJSONC(data []byte) ([]byte, error)
}

// ResolveEnvironment picks a workspace's environment: the project's settings when it
// has them, else the repository's .wshub/environment.json, else its devcontainer file,
// else none (the zero Environment).
func ResolveEnvironment(ctx context.Context, files EnvironmentFiles, p *Project, ref string) (*Environment, error) {
	if len(p.Environment) > 0 {
		return ParseEnvironment(p.Environment, EnvironmentFromProject)
	}
	data, ok, err := files.ReadFileAt(ctx, p, ref, EnvironmentFile, MaxEnvironmentFileBytes)
	if err != nil {
		return nil, readEnvError(EnvironmentFile, err)
	}
	if ok {
		return ParseEnvironment(data, EnvironmentFile)
	}
	data, ok, err = files.ReadFileAt(ctx, p, ref, DevcontainerFile, MaxEnvironmentFileBytes)
	if err != nil {
		return nil, readEnvError(DevcontainerFile, err)
	}
	if ok {
		std, err := files.StandardizeJSONC(data)
		if err != nil {
			return nil, envErrorf(DevcontainerFile, "is not valid JSON with comments: %v", err)
		}
		return ParseDevcontainer(std)
	}
	return &Environment{}, nil
}

// readEnvError: a file too large is the repository's fault (a SetupError); anything
// else (git failed) is the hub's, retried by the claim.
func readEnvError(source string, err error) error {
	if errors.Is(err, ErrFileTooLarge) {
		return envErrorf(source, "is larger than %d bytes", MaxEnvironmentFileBytes)
	}
	return fmt.Errorf("read %s: %w", source, err)
}
