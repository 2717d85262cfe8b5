package core

import (
	"cmp"
	"context"
	"sync"
)

// turnSettings is what a local turn runs with: its project (nil when it could not be
// read), the agent's environment and the masker of the project's secrets.
type turnSettings struct {
	project *Project
	env     []string
	mask    *Masker
}

// readTurnSettings reads a turn's project and its secrets side by side (the project's
// id is the workspace's: neither waits for the other), and opens the environment the
// workspace was set up with (env, its record, read with the turn's message). A project
// that cannot be read gives no environment nor secrets (the caller fails closed: no
// network); an environment or secrets that cannot be read are an error, for a turn
// never runs without the secrets masked that it may print.
func (s *Worker) readTurnSettings(ctx context.Context, ws *Workspace, env []byte) (turnSettings, error) {
	var (
		wg      sync.WaitGroup
		secrets []openSecret
		secrErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		secrets, secrErr = openSecrets(ctx, s.kernel, s.store, ws.ProjectID)
	}()
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	wg.Wait()
	if err != nil {
		return turnSettings{}, nil
	}
	kept, envErr := keptEnvironmentOf(env)
	if err := cmp.Or(envErr, secrErr); err != nil {
		return turnSettings{project: p}, err
	}
	list, mask := turnEnvironmentOf(kept, secrets, ws, p)
	return turnSettings{project: p, env: list, mask: mask}, nil
}
