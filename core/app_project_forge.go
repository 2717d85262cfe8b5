package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// AuditForgeEventsChanged is the audit log's action for an owner's change to a
// project's forge events (the webhook's secret is never written there).
const AuditForgeEventsChanged = "project.forge_events_changed"

// ForgeEvents reads the forge events of one of the account's projects (owners): nil
// when it takes none. The webhook's secret is left out, sealed or open.
func (s *AppProjects) ForgeEvents(ctx context.Context, a *AppSession, projectID string) (*ForgeHook, error) {
	p, err := s.owned(ctx, a, projectID)
	if err != nil {
		return nil, err
	}
	h, err := s.forge.store.GetForgeHook(ctx, p.ID)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h.SealedSecret = nil
	return h, nil
}

// SetForgeEvents sets or turns off the forge events of one of the account's projects
// (owners), under the operator's rules, audited in the same transaction.
func (s *AppProjects) SetForgeEvents(ctx context.Context, a *AppSession, projectID string, in ForgeEventsInput) (*ForgeHook, error) {
	p, err := s.owned(ctx, a, projectID)
	if err != nil {
		return nil, err
	}
	h, p, err := s.forge.change(ctx, p.ID, in)
	if err != nil {
		return nil, err
	}
	err = s.admin.store.InTx(ctx, func(q Queries) error {
		if err := writeForgeHook(ctx, q, p, h); err != nil {
			return err
		}
		return a.audit(ctx, q, s.admin.clock.Now(), AuditForgeEventsChanged, p.ID, forgeEventsChanges(h, in))
	})
	if err != nil {
		return nil, err
	}
	if h != nil {
		h.SealedSecret = nil
	}
	return h, nil
}

// forgeEventsChanges says what an owner's change set, for the audit log.
func forgeEventsChanges(h *ForgeHook, in ForgeEventsInput) string {
	if h == nil {
		return "forge events off"
	}
	out := []string{"handle " + h.Handle}
	if h.TriggerLabel != "" {
		out = append(out, fmt.Sprintf("trigger label %q", h.TriggerLabel))
	}
	out = append(out, fmt.Sprintf("fix checks %d", h.FixChecks))
	if in.Secret != nil {
		out = append(out, "webhook secret replaced")
	}
	return strings.Join(out, ", ")
}
