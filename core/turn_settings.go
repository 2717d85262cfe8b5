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

// readTurnSettings reads a turn's project, the environment its workspace was set up
// with and the project's secrets side by side: none needs another's answer (the
// project's id is the workspace's), so the turn waits for one round trip to the
// store, not three. A project that cannot be read gives no environment nor secrets
// (the caller fails closed: no network); an environment or secrets that cannot be read
// are an error, for a turn never runs without the secrets masked that it may print.
func (s *Worker) readTurnSettings(ctx context.Context, ws *Workspace) (turnSettings, error) {
	var (
		wg              sync.WaitGroup
		env             *Environment
		secrets         []openSecret
		envErr, secrErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		env, envErr = environments{s}.workspaceEnvironment(ctx, ws)
	}()
	go func() {
		defer wg.Done()
		secrets, secrErr = openSecrets(ctx, s.kernel, s.store, ws.ProjectID)
	}()
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	wg.Wait()
	if err != nil {
		return turnSettings{}, nil
	}
	if err := cmp.Or(envErr, secrErr); err != nil {
		return turnSettings{project: p}, err
	}
	list, mask := turnEnvironmentOf(env, secrets, ws, p)
	return turnSettings{project: p, env: list, mask: mask}, nil
}
