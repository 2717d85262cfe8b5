package core

import "context"

// Project secrets (issue #44 §3). Placeholder until the secrets land: no project has
// any yet.

// secretPurpose says which of a project's secrets a run gets.
type secretPurpose int

const (
	// secretsForSetup: setup and update scripts get every secret, except that one run
	// from a base other than the project's default branch gets the agent's only.
	secretsForSetup secretPurpose = iota
	// secretsForAgent: turns get the secrets marked for the agent.
	secretsForAgent
)

// secretsFor returns the secrets a run of ws gets as NAME=value, and the values of
// every secret of the project (what is masked in what the run says).
func (s environments) secretsFor(ctx context.Context, ws *Workspace, p *Project, purpose secretPurpose) (env, values []string, err error) {
	return nil, nil, nil
}
