package core

import (
	"cmp"
	"context"
	"sync"
)

// turnSettings is what a local turn runs with: its project (nil when it could not be
// read), the agent's environment and the masker of the project's secrets; and its
// commit's co-author (coAuthorRead: read, "" for none), read at once beside them.
type turnSettings struct {
	project      *Project
	env          []string
	mask         *Masker
	coAuthor     string
	coAuthorRead bool
}

// readTurnSettings reads a turn's project, its secrets and the co-author of msg side by
// side (the project's id is the workspace's: none waits for another), and opens the
// environment the workspace was set up with (env, its record, read with the turn's
// message). A project
// that cannot be read gives no environment nor secrets (the caller fails closed: no
// network); an environment or secrets that cannot be read are an error, for a turn
// never runs without the secrets masked that it may print.
func (s *Worker) readTurnSettings(ctx context.Context, ws *Workspace, msg *StoredMessage, env []byte) (turnSettings, error) {
	var (
		wg       sync.WaitGroup
		secrets  []openSecret
		secrErr  error
		coAuthor string
		coErr    error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		secrets, secrErr = openSecrets(ctx, s.kernel, s.store, ws.ProjectID)
	}()
	if msg.Author != nil && msg.Author.MemberID != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			coAuthor, coErr = coAuthorOf(ctx, s.store, msg)
		}()
	}
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	wg.Wait()
	// A co-author not read now is read again at the commit.
	set := turnSettings{coAuthor: coAuthor, coAuthorRead: coErr == nil}
	if err != nil {
		return set, nil
	}
	set.project = p
	kept, envErr := keptEnvironmentOf(env)
	if err := cmp.Or(envErr, secrErr); err != nil {
		return set, err
	}
	set.env, set.mask = turnEnvironmentOf(kept, secrets, ws, p)
	return set, nil
}
