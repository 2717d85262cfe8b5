package main

// wshub admin project secret set|list|remove.

import (
	"context"
	"flag"
	"time"

	"github.com/wshub/wshub/core"
)

func projectSecretSet(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	name := fs.String("name", "", "the variable's name: letters, digits and _ (not HOME, PATH, WSHUB_…)")
	file := fs.String("value-file", "", "file holding the value (- reads standard input); line breaks that end it are dropped")
	agent := fs.Bool("agent", false, "give it to the agent's turns too, not only to the setup and update scripts")
	return func(ctx context.Context, h adminHub) (any, error) {
		var value string
		var err error
		if *file == "-" {
			value, err = readSecret("--value-file", h.stdin)
		} else {
			value, err = readSecretFile("--value-file", *file)
		}
		if err != nil {
			return nil, err
		}
		s, err := h.svc.ProjectSecrets.Set(ctx, core.ProjectSecretInput{ProjectID: *id, Name: *name, Value: value, Agent: *agent})
		if err != nil {
			return nil, err
		}
		return secretOf(s), nil
	}
}

func projectSecretList(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.ProjectSecrets.List(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]secretOut, len(list))
		for i, s := range list {
			out[i] = secretOf(s)
		}
		return out, nil
	}
}

func projectSecretRemove(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	name := fs.String("name", "", "the secret's name")
	return func(ctx context.Context, h adminHub) (any, error) {
		if err := h.svc.ProjectSecrets.Remove(ctx, *id, *name); err != nil {
			return nil, err
		}
		return secretRemoved{Name: *name, ProjectID: *id, Removed: true}, nil
	}
}

// secretOut is a secret as set and list show it: never its value.
type secretOut struct {
	Agent     bool   `json:"agent"`
	CreatedAt string `json:"createdAt"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	UpdatedAt string `json:"updatedAt"`
}

func secretOf(s *core.ProjectSecret) secretOut {
	return secretOut{Agent: s.Agent, CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339), Name: s.Name, ProjectID: s.ProjectID,
		UpdatedAt: s.UpdatedAt.UTC().Format(time.RFC3339)}
}

type secretRemoved struct {
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	Removed   bool   `json:"removed"`
}
