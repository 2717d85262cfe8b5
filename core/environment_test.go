package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseEnvironmentReadsEveryField(t *testing.T) {
	e, err := ParseEnvironment([]byte(`{
		"setup": "npm ci", "update": "npm ci --prefer-offline",
		"env": {"NODE_ENV": "test"},
		"cache": [{"paths": ["node_modules", "~/.npm", "./a/../b"], "keyFiles": ["package-lock.json"]}],
		"image": "node:22", "setupTimeout": "15m"}`), EnvironmentFile)
	if err != nil {
		t.Fatal(err)
	}
	if e.Setup != "npm ci" || e.Update != "npm ci --prefer-offline" || e.Env["NODE_ENV"] != "test" || e.Image != "node:22" {
		t.Errorf("fields: %+v", e)
	}
	if got := strings.Join(e.Cache[0].Paths, ","); got != "node_modules,~/.npm,b" {
		t.Errorf("cache paths cleaned: %s", got)
	}
	if e.Timeout() != 15*time.Minute || e.Source != EnvironmentFile {
		t.Errorf("timeout %s, source %q", e.Timeout(), e.Source)
	}
	e, err = ParseEnvironment([]byte(`{"setupTimeout": 90}`), EnvironmentFile)
	if err != nil || e.Timeout() != 90*time.Second {
		t.Errorf("seconds: %v %v", e, err)
	}
	if e, _ := ParseEnvironment([]byte(`{}`), EnvironmentFile); e.Timeout() != DefaultSetupTimeout || !e.Empty() {
		t.Errorf("empty: %+v", e)
	}
}

// A file that cannot be used is refused in words, as a setup failure of its own.
func TestParseEnvironmentRefusesInWords(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`{"setpu": "x"}`, `unknown field "setpu"`},
		{`{"setup": 3}`, "setup must be a string"},
		{`{"setup": "a"} {}`, "more than one JSON value"},
		{`{"setup": "a"`, "not a valid environment"},
		{`{"env": {"HOME": "/x"}}`, "may not set HOME"},
		{`{"env": {"WSHUB_TOKEN": "x"}}`, "may not set WSHUB_TOKEN"},
		{`{"env": {"1A": "x"}}`, "not a variable name"},
		{`{"cache": [{"paths": ["../up"]}]}`, "leaves the checkout"},
		{`{"cache": [{"paths": ["/etc"]}]}`, "must be relative"},
		{`{"cache": [{"paths": [".git/objects"]}]}`, "inside .git"},
		{`{"cache": [{"paths": []}]}`, "has no paths"},
		{`{"cache": [{"paths": ["a"], "keyFiles": ["~/x"]}]}`, "must be a file of the checkout"},
		{`{"image": "Not An Image"}`, "is not an image reference"},
		{`{"setupTimeout": "2h"}`, "between 1 s and 1h0m0s"},
		{`{"setupTimeout": "soon"}`, "neither seconds nor a duration"},
		{`{"setup": "a\u0000b"}`, "NUL"},
		{strings.Repeat(" ", MaxEnvironmentFileBytes+1), "at most"},
	} {
		_, err := ParseEnvironment([]byte(c.file), EnvironmentFile)
		var se *SetupError
		if !errors.As(err, &se) || se.StatusCode != "setup_failed:environment_invalid" || !strings.Contains(se.Detail, c.want) {
			t.Errorf("%.40s: want a setup_failed:environment_invalid saying %q, got %v", c.file, c.want, err)
			continue
		}
		if !strings.HasPrefix(se.Detail, EnvironmentFile+" ") {
			t.Errorf("the refusal names the file: %q", se.Detail)
		}
	}
}

func TestParseDevcontainerSubset(t *testing.T) {
	e, err := ParseDevcontainer([]byte(`{"name": "x", "image": "python:3.12",
		"onCreateCommand": "pip install -r requirements.txt",
		"updateContentCommand": ["make", "it's"],
		"postCreateCommand": {"b": "echo b", "a": ["echo", "a"]},
		"containerEnv": {"A": "1", "B": "2"}, "remoteEnv": {"B": "3", "A": null},
		"features": {}, "forwardPorts": [3000], "customizations": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	wantSetup := "set -e\npip install -r requirements.txt\n'make' 'it'\\''s'\n'echo' 'a'\necho b"
	if e.Setup != wantSetup {
		t.Errorf("setup:\n%s\nwant:\n%s", e.Setup, wantSetup)
	}
	if e.Update != `'make' 'it'\''s'` || e.Image != "python:3.12" {
		t.Errorf("update %q image %q", e.Update, e.Image)
	}
	if len(e.Env) != 1 || e.Env["B"] != "3" {
		t.Errorf("env (remoteEnv wins, null unsets): %v", e.Env)
	}
	if got := strings.Join(e.Ignored, ","); got != "features,forwardPorts" {
		t.Errorf("ignored: %s", got)
	}
	if _, err := ParseDevcontainer([]byte(`{"onCreateCommand": 3}`)); err == nil || !strings.Contains(err.Error(), "onCreateCommand must be") {
		t.Errorf("bad command: %v", err)
	}
}
