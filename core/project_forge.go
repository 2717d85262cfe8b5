package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// A project's forge settings and credential: validated and sealed when the operator
// sets them, opened just before the hub's own git or forge calls use them.

// ProjectForgeInput is what add and update change of a project's forge and credential;
// nil fields are left as they are (on add: the forge is detected from the URL,
// pull requests are off, and there is no credential).
type ProjectForgeInput struct {
	Forge        *string
	PullRequests *string
	// Credential replaces the project's credential; ClearCredential removes it (the
	// hub-wide one is used again).
	Credential      *ProjectCredential
	ClearCredential bool
}

// apply validates in and sets it on p, sealing a new credential to p.
func (k kernel) applyForge(p *Project, in ProjectForgeInput) error {
	if in.Credential != nil && in.ClearCredential {
		return Errorf(CodeInvalidRequest, "give a credential or clear it, not both")
	}
	if in.Forge != nil {
		if *in.Forge != "" && !ValidForge(*in.Forge) {
			return Errorf(CodeInvalidRequest, "forge is %s, not %q", strings.Join(ForgeKinds, ", "), *in.Forge)
		}
		p.Forge = *in.Forge
	}
	if p.Forge == "" {
		p.Forge = DetectForge(p.Repository)
	}
	if in.PullRequests != nil {
		if !ValidPullRequestMode(*in.PullRequests) {
			return Errorf(CodeInvalidRequest, "pull requests are %s, not %q", strings.Join(PullRequestModes, ", "), *in.PullRequests)
		}
		p.PullRequests = *in.PullRequests
	}
	if p.PullRequests == "" {
		p.PullRequests = PullRequestsOff
	}
	kind := p.CredentialKind
	switch {
	case in.ClearCredential:
		kind = ""
	case in.Credential != nil:
		if err := in.Credential.Validate(); err != nil {
			return err
		}
		kind = in.Credential.Kind
	}
	if kind == CredentialGitHubApp && p.Forge != ForgeGitHub {
		return Errorf(CodeInvalidRequest, "a GitHub App credential needs the forge github (this project's is %q)", p.Forge)
	}
	if p.PullRequests != PullRequestsOff {
		if p.Forge == "" {
			return Errorf(CodeInvalidRequest, "pull requests need the repository's forge: name it (%s)", strings.Join(ForgeKinds, ", "))
		}
		if kind == CredentialSSHKey {
			return Errorf(CodeInvalidRequest, "pull requests need a token or a GitHub App: an SSH deploy key cannot call the forge's API")
		}
	}
	switch {
	case in.ClearCredential:
		p.CredentialKind, p.SealedCredential, p.Credential = "", nil, nil
	case in.Credential != nil:
		plain, err := json.Marshal(in.Credential)
		if err != nil {
			return err
		}
		sealed, err := k.seal(plain, SealedProjectCredential.binding(p.AccountID, p.ID))
		if err != nil {
			return err
		}
		p.CredentialKind, p.SealedCredential, p.Credential = kind, sealed, in.Credential
	}
	return nil
}

// openCredential opens the project's sealed credential into p.Credential: its own,
// else its account's GitHub App (accountApp), else nil.
func (k kernel) openCredential(ctx context.Context, p *Project) error {
	if len(p.SealedCredential) == 0 {
		p.Credential = nil
		return k.accountApp(ctx, p)
	}
	plain, err := k.open(p.SealedCredential, SealedProjectCredential.binding(p.AccountID, p.ID))
	if err != nil {
		return fmt.Errorf("open the project's credential: %w", err)
	}
	var c ProjectCredential
	if err := json.Unmarshal([]byte(plain), &c); err != nil {
		return fmt.Errorf("read the project's credential: %w", err)
	}
	p.Credential = &c
	return nil
}

// forHub readies a project for this hub's git and forge calls: its mirror here, and its
// credential opened.
func (k kernel) forHub(ctx context.Context, p *Project, mirror RepoMirror) error {
	p.MirrorPath = mirror.Path(p.ID)
	return k.openCredential(ctx, p)
}
