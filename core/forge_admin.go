package core

import (
	"context"
	"errors"
	"strings"
)

// maxTriggerLabel bounds a trigger label, as GitLab bounds a label's title.
const maxTriggerLabel = 255

// maxForgeSecret bounds a webhook secret; forges generate 20 to 64 characters.
const maxForgeSecret = 1024

// ForgeEventsInput is what `wshub admin project update` changes of a project's forge
// events; nil fields are left as they are.
type ForgeEventsInput struct {
	// Handle asks for work in a comment ("" = DefaultForgeHandle).
	Handle *string
	// Secret is the webhook's secret, as set in the forge's webhook.
	Secret *string
	// TriggerLabel, given to an issue, starts a workspace on it ("": none).
	TriggerLabel *string
	// FixChecks is how many failed checks per pull request become follow-ups (0: none).
	FixChecks *int
	// Off turns the project's events off: its secret and handle are dropped, and its
	// repository's deliveries are answered as an unknown repository's.
	Off bool
	// On turns them on with nothing else set: a GitHub project of an account with a
	// GitHub App takes the App's events without a secret of its own.
	On bool
}

// ForgeAdmin is the operator's commands on projects' forge events.
type ForgeAdmin struct {
	kernel
	store forgeEventsStore
}

// SetForgeEvents sets a project's forge events, or turns them off (operator; nil
// then). The first setting needs the secret: without one no event could be verified.
func (s *ForgeAdmin) SetForgeEvents(ctx context.Context, projectID string, in ForgeEventsInput) (*ForgeHook, error) {
	h, p, err := s.change(ctx, projectID, in)
	if err != nil {
		return nil, err
	}
	return h, writeForgeHook(ctx, s.store, p, h)
}

// writeForgeHook stores a project's forge events as change made them: h, or none.
func writeForgeHook(ctx context.Context, q ForgeEventQueries, p *Project, h *ForgeHook) error {
	if h == nil {
		return q.DeleteForgeHook(ctx, p.ID)
	}
	return q.PutForgeHook(ctx, h)
}

// change is the forge events a project will have once in is applied (nil: none), read
// and checked but not stored.
func (s *ForgeAdmin) change(ctx context.Context, projectID string, in ForgeEventsInput) (*ForgeHook, *Project, error) {
	p, err := s.store.GetProjectByID(ctx, projectID)
	if err == nil && p.RemovedAt != nil {
		err = ErrNoRows
	}
	if err != nil {
		return nil, nil, notFound(err, CodeProjectNotFound, "no such project")
	}
	if p.Forge == "" {
		return nil, nil, Errorf(CodeInvalidRequest, "forge events need the project's forge: name it (%s)", strings.Join(ForgeKinds, ", "))
	}
	if in.Off {
		if in.Handle != nil || in.Secret != nil || in.TriggerLabel != nil || in.FixChecks != nil {
			return nil, nil, Errorf(CodeInvalidRequest, "turn forge events off, or set them, not both")
		}
		return nil, p, nil
	}
	key := RepositoryKey(p.Repository)
	if key == "" {
		return nil, nil, Errorf(CodeInvalidRequest, "the project's repository is not a forge's URL, so no event can name it")
	}
	h, err := s.store.GetForgeHook(ctx, p.ID)
	switch {
	case errors.Is(err, ErrNoRows):
		if in.Secret == nil && !s.hasGitHubApp(ctx, p) {
			return nil, nil, Errorf(CodeInvalidRequest, "forge events need the webhook's secret (on GitHub, or the account's GitHub App)")
		}
		h = &ForgeHook{ProjectID: p.ID, AccountID: p.AccountID, Handle: DefaultForgeHandle}
	case err != nil:
		return nil, nil, err
	}
	h.Forge, h.RepositoryKey = p.Forge, key
	if in.Handle != nil {
		handle := strings.TrimSpace(*in.Handle)
		if handle == "" {
			handle = DefaultForgeHandle
		}
		if len(handle) > 100 || strings.ContainsFunc(handle, isSpace) {
			return nil, nil, Errorf(CodeInvalidRequest, "the handle is one word of at most 100 characters, such as @wshub")
		}
		h.Handle = handle
	}
	if in.TriggerLabel != nil {
		label := strings.TrimSpace(*in.TriggerLabel)
		// GitHub's labels are at most 50 characters, GitLab's and Gitea's longer; a
		// label may hold spaces.
		if chars(label) > maxTriggerLabel || strings.ContainsAny(label, "\n\r") {
			return nil, nil, Errorf(CodeInvalidRequest, "the trigger label is one line of at most %d characters", maxTriggerLabel)
		}
		h.TriggerLabel = label
	}
	if in.FixChecks != nil {
		if *in.FixChecks < 0 || *in.FixChecks > MaxFixChecks {
			return nil, nil, Errorf(CodeInvalidRequest, "the failed checks to fix are 0 (off) to %d a pull request", MaxFixChecks)
		}
		h.FixChecks = *in.FixChecks
	}
	if in.Secret != nil {
		secret := strings.TrimSpace(*in.Secret)
		if secret == "" || len(secret) > maxForgeSecret {
			return nil, nil, Errorf(CodeInvalidRequest, "the webhook secret is 1 to %d characters", maxForgeSecret)
		}
		if h.SealedSecret, err = s.seal([]byte(secret), SealedForgeSecret.binding(h.AccountID, h.ProjectID)); err != nil {
			return nil, nil, err
		}
	}
	h.UpdatedAt = s.clock.Now()
	return h, p, nil
}

// hasGitHubApp reports whether p is on GitHub and its account has a GitHub App, whose
// secret verifies the project's events. A store failure reads as none: the operator
// is asked for a secret, and can try again.
func (s *ForgeAdmin) hasGitHubApp(ctx context.Context, p *Project) bool {
	if p.Forge != ForgeGitHub {
		return false
	}
	_, err := s.store.GetGitHubApp(ctx, p.AccountID)
	return err == nil
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
