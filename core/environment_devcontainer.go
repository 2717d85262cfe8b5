package core

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The supported subset of the Dev Container spec (containers.dev/implementors/json_reference):
// image, onCreateCommand, updateContentCommand, postCreateCommand, containerEnv and
// remoteEnv. Everything else the file holds is named in Environment.Ignored, so the
// workspace can say what did not apply. docs/environments.md lists both.

// devcontainerHonoured are the properties the hub applies.
var devcontainerHonoured = map[string]bool{
	"image": true, "onCreateCommand": true, "updateContentCommand": true, "postCreateCommand": true,
	"containerEnv": true, "remoteEnv": true,
}

// devcontainerQuiet are properties that change nothing a workspace does and are not
// worth a line: a name, and the editors' own settings.
var devcontainerQuiet = map[string]bool{"name": true, "customizations": true, "$schema": true}

// ParseDevcontainer reads a devcontainer.json already made plain JSON (comments and
// trailing commas taken out: EnvironmentFiles.StandardizeJSONC).
func ParseDevcontainer(std []byte) (*Environment, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(std, &raw); err != nil {
		return nil, envErrorf(DevcontainerFile, "is not a JSON object: %s", jsonProblem(err))
	}
	e := &Environment{Source: DevcontainerFile}
	var scripts []string
	for _, key := range []string{"onCreateCommand", "updateContentCommand", "postCreateCommand"} {
		s, err := lifecycleCommand(raw[key])
		if err != nil {
			return nil, envErrorf(DevcontainerFile, "%s %s", key, err)
		}
		if s != "" {
			scripts = append(scripts, s)
		}
		if key == "updateContentCommand" {
			e.Update = s
		}
	}
	// Each command as its own step, stopping at the first that fails, as the
	// devcontainer CLI does.
	if len(scripts) > 0 {
		e.Setup = "set -e\n" + strings.Join(scripts, "\n")
	}
	if v, ok := raw["image"]; ok {
		if err := json.Unmarshal(v, &e.Image); err != nil {
			return nil, envErrorf(DevcontainerFile, "image must be a string")
		}
	}
	for _, key := range []string{"containerEnv", "remoteEnv"} {
		v, ok := raw[key]
		if !ok {
			continue
		}
		var env map[string]*string
		if err := json.Unmarshal(v, &env); err != nil {
			return nil, envErrorf(DevcontainerFile, "%s must be an object of strings", key)
		}
		for n, val := range env {
			if e.Env == nil {
				e.Env = map[string]string{}
			}
			if val == nil { // remoteEnv's null unsets a variable
				delete(e.Env, n)
				continue
			}
			e.Env[n] = *val // remoteEnv, read second, wins
		}
	}
	for key := range raw {
		if !devcontainerHonoured[key] && !devcontainerQuiet[key] {
			e.Ignored = append(e.Ignored, key)
		}
	}
	sort.Strings(e.Ignored)
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// lifecycleCommand turns a lifecycle command's three forms into one shell script: a
// string runs in a shell, an array runs without one (each word quoted), and an object
// names commands the spec runs in parallel, run here one after another in name order.
func lifecycleCommand(v json.RawMessage) (string, error) {
	if len(v) == 0 || string(v) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, nil
	}
	var words []string
	if json.Unmarshal(v, &words) == nil {
		return quoteWords(words), nil
	}
	var named map[string]json.RawMessage
	if json.Unmarshal(v, &named) != nil {
		return "", fmt.Errorf("must be a string, a list of strings or an object of those")
	}
	names := make([]string, 0, len(named))
	for n := range named {
		names = append(names, n)
	}
	sort.Strings(names)
	var steps []string
	for _, n := range names {
		var step string
		if json.Unmarshal(named[n], &step) != nil {
			if json.Unmarshal(named[n], &words) != nil {
				return "", fmt.Errorf("%q must be a string or a list of strings", n)
			}
			step = quoteWords(words)
		}
		steps = append(steps, step)
	}
	return strings.Join(steps, "\n"), nil
}

// quoteWords is a command line running words without a shell's expansions.
func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
