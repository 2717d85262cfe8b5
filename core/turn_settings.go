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

// readTurnSettings makes a turn's settings of what the take read with its message
// (next): the project, the environment the workspace was set up with, and the
// project's secrets; the co-author of a member's message is read meanwhile. A project
// that is not the workspace's account's gives no environment nor secrets (the caller
// fails closed: no network); an environment or secrets that cannot be opened are an
// error, for a turn never runs without the secrets masked that it may print.
func readTurnSettings(ctx context.Context, k kernel, members MemberQueries, ws *Workspace, next *NextTurn) (turnSettings, error) {
	var (
		wg       sync.WaitGroup
		coAuthor string
		coErr    error
	)
	if a := next.Message.Author; a != nil && a.MemberID != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			coAuthor, coErr = coAuthorOf(ctx, members, next.Message)
		}()
	}
	set, err := openTurnSettings(k, ws, next)
	wg.Wait()
	// A co-author not read now is read again at the commit.
	set.coAuthor, set.coAuthorRead = coAuthor, coErr == nil
	return set, err
}

// openTurnSettings is the part of readTurnSettings that reads nothing.
func openTurnSettings(k kernel, ws *Workspace, next *NextTurn) (turnSettings, error) {
	p := next.Project
	if p == nil || p.AccountID != ws.AccountID {
		return turnSettings{}, nil
	}
	kept, envErr := keptEnvironmentOf(next.Environment)
	secrets, secrErr := openSecretList(k, next.Secrets)
	if err := cmp.Or(envErr, secrErr); err != nil {
		return turnSettings{project: p}, err
	}
	env, mask := turnEnvironmentOf(kept, secrets, ws, p)
	return turnSettings{project: p, env: env, mask: mask}, nil
}
