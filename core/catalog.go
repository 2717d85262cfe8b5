package core

import "context"

// ListProjects returns the account's projects that the caller's key reaches.
func (s *Workspaces) ListProjects(ctx context.Context, acct *Account) ([]*Project, error) {
	return accountProjects(ctx, s.store, acct)
}

// ListAgents returns the agent ids whose program is configured for the machines.
func (s *Workspaces) ListAgents(ctx context.Context, acct *Account) []string {
	return s.agents.Available(ctx)
}

// ListProviders returns the configured machine providers.
func (s *Workspaces) ListProviders(ctx context.Context, acct *Account) []Provider {
	return s.providers.List(ctx)
}
