package core

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// KeyScope is one kind of call an API key may make. Each API route declares the one
// it needs; Authorize decides.
type KeyScope string

// The scopes a key can be limited to.
const (
	ScopeWorkspacesRead   KeyScope = "workspaces:read"
	ScopeWorkspacesWrite  KeyScope = "workspaces:write"
	ScopeMessagesWrite    KeyScope = "messages:write"
	ScopeAttachmentsWrite KeyScope = "attachments:write"
	ScopeWebhooksRead     KeyScope = "webhooks:read"
	ScopeWebhooksWrite    KeyScope = "webhooks:write"
	ScopeProjectsRead     KeyScope = "projects:read"
	ScopeApprovalsWrite   KeyScope = "approvals:write"
)

// KeyScopes lists every scope, in the order forms and documents show them.
var KeyScopes = []KeyScope{ScopeWorkspacesRead, ScopeWorkspacesWrite, ScopeMessagesWrite, ScopeAttachmentsWrite,
	ScopeWebhooksRead, ScopeWebhooksWrite, ScopeProjectsRead, ScopeApprovalsWrite}

// KeyLimits are what an API key is limited to. The zero value is a key with full
// access, as every key made before limits existed: nil Scopes is every scope, nil
// Projects every project of the account, nil ExpiresAt never.
type KeyLimits struct {
	Scopes    []KeyScope
	Projects  []string
	ExpiresAt *time.Time
}

// auditDetail is the key's name and, for a limited key, its limits, as the audit log
// records its creation: who made a key that reaches what, kept after the key is gone.
func (l KeyLimits) auditDetail(name string) string {
	if !l.Limited() {
		return name + " (full access)"
	}
	var parts []string
	if l.Scopes != nil {
		parts = append(parts, "scopes "+JoinKeyScopes(l.Scopes))
	}
	if l.Projects != nil {
		parts = append(parts, "projects "+strings.Join(l.Projects, ", "))
	}
	if l.ExpiresAt != nil {
		parts = append(parts, "expires "+l.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return name + " (" + strings.Join(parts, "; ") + ")"
}

// Limited reports whether the key is limited in any way.
func (l KeyLimits) Limited() bool { return l.Scopes != nil || l.Projects != nil || l.ExpiresAt != nil }

// expired reports whether the key can no longer be used at now.
func (l KeyLimits) expired(now time.Time) bool {
	return l.ExpiresAt != nil && !now.Before(*l.ExpiresAt)
}

// allows answers 403 key_scope_required when the key lacks scope. A scope that is not
// one of KeyScopes is a route declaring none: refused, so a route cannot forget it.
func (l KeyLimits) allows(scope KeyScope) error {
	if !slices.Contains(KeyScopes, scope) {
		return fmt.Errorf("route declares no known key scope: %q", scope)
	}
	if l.Scopes != nil && !slices.Contains(l.Scopes, scope) {
		return Errorf(CodeKeyScopeRequired, "this API key lacks the scope %s; make a key with it", scope)
	}
	return nil
}

// reaches reports whether the key may see the project's workspaces.
func (l KeyLimits) reaches(projectID string) bool {
	return l.Projects == nil || slices.Contains(l.Projects, projectID)
}

// Authorize answers 403 key_scope_required when the caller's key lacks the scope a
// route needs; a key without scopes has them all.
func (s *Workspaces) Authorize(a *Account, scope KeyScope) error { return a.KeyLimits.allows(scope) }

// parseKeyScopes reads a comma-separated list of scopes (the CLI's and the app's
// form). Empty: nil, every scope.
func parseKeyScopes(list string) ([]KeyScope, error) {
	var out []KeyScope
	for _, s := range splitList(list) {
		sc := KeyScope(s)
		if !slices.Contains(KeyScopes, sc) {
			return nil, Errorf(CodeInvalidRequest, "unknown scope %q; the scopes are %s", s, JoinKeyScopes(KeyScopes))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// JoinKeyScopes names scopes, comma-separated, as the CLI and the app show them.
func JoinKeyScopes(scopes []KeyScope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ", ")
}

// NewKeyInput is a key to make: its account, name and limits. Projects and scopes
// come as the CLI and the app's form take them, comma-separated.
type NewKeyInput struct {
	AccountID, Name string
	Scopes          string
	Projects        string
	ExpiresAt       *time.Time
}

// keyLimits validates what a new key is limited to: known scopes, projects of the
// account, an expiry in the future.
func keyLimits(in NewKeyInput, now time.Time, projects []*Project) (KeyLimits, error) {
	var l KeyLimits
	scopes, err := parseKeyScopes(in.Scopes)
	if err != nil {
		return l, err
	}
	if strings.TrimSpace(in.Scopes) != "" && len(scopes) == 0 {
		return l, Errorf(CodeInvalidRequest, "name at least one scope, or none for full access")
	}
	l.Scopes = scopes
	for _, id := range splitList(in.Projects) {
		if !slices.ContainsFunc(projects, func(p *Project) bool { return p.ID == id }) {
			return l, Errorf(CodeProjectNotFound, "no project %q on this account", id)
		}
		if !slices.Contains(l.Projects, id) {
			l.Projects = append(l.Projects, id)
		}
	}
	if strings.TrimSpace(in.Projects) != "" && len(l.Projects) == 0 {
		return l, Errorf(CodeInvalidRequest, "name at least one project, or none for every project")
	}
	if in.ExpiresAt != nil {
		if !in.ExpiresAt.After(now) {
			return l, Errorf(CodeInvalidRequest, "the expiry %s is not in the future", in.ExpiresAt.UTC().Format(time.RFC3339))
		}
		t := in.ExpiresAt.UTC()
		l.ExpiresAt = &t
	}
	return l, nil
}
