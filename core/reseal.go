package core

import (
	"context"
	"errors"
	"fmt"
)

// Re-sealing after a key rotation: every sealed value the hub keeps is opened with
// whichever key sealed it and sealed again under the current key, in batches, while
// the hub runs. A value is replaced only if it is still what was read (compare and
// swap), so a row written or deleted meanwhile is left to its writer.

// SealedKind names one place sealed values live.
type SealedKind string

// The places sealed values live, in the order Reseal visits them.
const (
	SealedMessageText    SealedKind = "message_text"
	SealedMessageFailure SealedKind = "message_failure"
	SealedWebhookSecret  SealedKind = "webhook_secret"
	SealedEventBody      SealedKind = "event_body"
	SealedChatEvent      SealedKind = "chat_event"
	SealedChatNotice     SealedKind = "chat_notice"
	SealedTurnEvent      SealedKind = "turn_event"
	// SealedProjectCredential is a project's own git and forge credential.
	SealedProjectCredential SealedKind = "project_credential"
	// SealedProjectSecret is a project's secret, bound to the project and its name so
	// that a value copied under another name does not open.
	SealedProjectSecret SealedKind = "project_secret"
	// SealedForgeSecret is the secret a project's forge signs webhook deliveries with.
	SealedForgeSecret SealedKind = "forge_secret"
	// SealedGitHubAppSecret is the webhook secret of an account's GitHub App.
	SealedGitHubAppSecret SealedKind = "github_app_secret"
	// SealedGitHubAppKey is the private key of an account's GitHub App.
	SealedGitHubAppKey SealedKind = "github_app_key"
	// SealedAsset values live in the BlobStore; the store lists their keys.
	SealedAsset SealedKind = "asset"
	// SealedWorkspaceTitle is a workspace's title, the first line of its first prompt.
	SealedWorkspaceTitle SealedKind = "workspace_title"
	// SealedSchedulePrompt is a schedule's prompt, bound to its account and id.
	SealedSchedulePrompt SealedKind = "schedule_prompt"
)

// SealedKinds lists every kind, in the order Reseal visits them.
var SealedKinds = []SealedKind{
	SealedMessageText, SealedMessageFailure, SealedWebhookSecret, SealedEventBody,
	SealedChatEvent, SealedChatNotice, SealedTurnEvent, SealedProjectCredential, SealedProjectSecret, SealedForgeSecret, SealedAsset,
	SealedWorkspaceTitle, SealedSchedulePrompt, SealedGitHubAppSecret, SealedGitHubAppKey,
}

// sealPrefixes are the binding prefixes by kind. A value is sealed bound to
// "prefix:owner:id", so a sealed value copied to another row, or another kind's
// column, does not open.
var sealPrefixes = map[SealedKind]string{
	SealedMessageText: "message", SealedMessageFailure: "failure", SealedWebhookSecret: "webhook",
	SealedEventBody: "event", SealedChatEvent: "chatevent", SealedChatNotice: "chatnotice",
	SealedTurnEvent: "turn-event", SealedProjectCredential: "credential", SealedProjectSecret: "project-secret",
	SealedForgeSecret: "forge-secret", SealedAsset: "asset", SealedWorkspaceTitle: "workspace-title",
	SealedSchedulePrompt: "schedule-prompt", SealedGitHubAppSecret: "github-app-secret",
	SealedGitHubAppKey: "github-app-key",
}

// binding is the sealing binding of a value of this kind owned by owner and id.
func (k SealedKind) binding(owner, id string) string { return sealPrefixes[k] + ":" + owner + ":" + id }

// SealedValue is one sealed value as the store lists it.
type SealedValue struct {
	// Cursor orders values within a kind; the next batch starts after it.
	Cursor string
	// Owner and ID are the ids the value's binding is built from (workspace and
	// message, account and webhook, platform and event id, ...).
	Owner, ID string
	Sealed    []byte
	// BlobKey names an asset's bytes in the BlobStore (Sealed is empty then).
	BlobKey string
}

// SealedReplacement swaps Old for New where the value still is Old.
type SealedReplacement struct {
	Value SealedValue
	New   []byte
}

// SealedStore lists and replaces sealed values for Reseal.
type SealedStore interface {
	// SealedValues returns up to limit values of kind whose cursor is after after
	// ("" starts at the beginning), in cursor order.
	SealedValues(ctx context.Context, kind SealedKind, after string, limit int) ([]SealedValue, error)
	// ReplaceSealed swaps each value that is still as listed, in one statement, and
	// returns how many it swapped.
	ReplaceSealed(ctx context.Context, kind SealedKind, r []SealedReplacement) (int, error)
}

// ResealProgress counts what Reseal did for one kind.
type ResealProgress struct {
	Kind SealedKind `json:"kind"`
	// Scanned values; Resealed of them now under the current key; Current were already;
	// Changed were rewritten or deleted by the hub between read and swap (their
	// writer sealed them under the current key); Failed did not open, or (an asset's
	// bytes) could not be read (listed in Errors).
	Scanned  int      `json:"scanned"`
	Resealed int      `json:"resealed"`
	Current  int      `json:"current"`
	Changed  int      `json:"changed"`
	Failed   int      `json:"failed"`
	Errors   []string `json:"errors,omitempty"`
}

// maxResealErrors bounds the errors kept per kind: one bad key explains them all.
const maxResealErrors = 10

// Reseal re-seals every sealed value under the current key, batch values per
// statement, calling report after each kind. Values that do not open (sealed under a
// key no longer configured, or damaged) are counted and named, not fatal: the rest
// still move to the current key. It returns ErrResealIncomplete when any failed.
func (s *Admin) Reseal(ctx context.Context, batch int, report func(ResealProgress)) error {
	if err := s.requireSealer(); err != nil {
		return err
	}
	if s.sealed == nil {
		return errors.New("reseal: the store cannot list sealed values")
	}
	if batch <= 0 {
		batch = 500
	}
	failed := false
	r := resealer{sealer: s.sealer, sealed: s.sealed, blobs: s.blobs}
	for _, kind := range SealedKinds {
		p, err := r.resealKind(ctx, kind, batch)
		if err != nil {
			return fmt.Errorf("reseal %s: %w", kind, err)
		}
		failed = failed || p.Failed > 0
		if report != nil {
			report(p)
		}
	}
	if failed {
		return ErrResealIncomplete
	}
	return nil
}

// ErrResealIncomplete says some values did not open; the progress reports name them.
var ErrResealIncomplete = errors.New("some sealed values did not open and were left as they were")

// resealer is one reseal run's work, on the adapters it reads and writes.
type resealer struct {
	sealer Sealer
	sealed SealedStore
	blobs  BlobStore
}

func (s resealer) resealKind(ctx context.Context, kind SealedKind, batch int) (ResealProgress, error) {
	p := ResealProgress{Kind: kind}
	after := ""
	for {
		values, err := s.sealed.SealedValues(ctx, kind, after, batch)
		if err != nil {
			return p, err
		}
		if len(values) == 0 {
			return p, nil
		}
		after = values[len(values)-1].Cursor
		p.Scanned += len(values)
		var swaps []SealedReplacement
		for _, v := range values {
			if kind == SealedAsset {
				if err := s.resealBlob(ctx, v, &p); err != nil {
					return p, err
				}
				continue
			}
			fresh, ok := s.resealOne(kind, v, &p)
			if ok {
				swaps = append(swaps, SealedReplacement{Value: v, New: fresh})
			}
		}
		if len(swaps) > 0 {
			n, err := s.sealed.ReplaceSealed(ctx, kind, swaps)
			if err != nil {
				return p, err
			}
			p.Resealed += n
			p.Changed += len(swaps) - n
		}
	}
}

// resealOne opens v and seals it again under the current key; ok is false when v is
// already current or does not open (counted in p).
func (s resealer) resealOne(kind SealedKind, v SealedValue, p *ResealProgress) (fresh []byte, ok bool) {
	if s.sealer.Current(v.Sealed) {
		p.Current++
		return nil, false
	}
	binding := kind.binding(v.Owner, v.ID)
	plain, err := s.sealer.Open(v.Sealed, binding)
	if err == nil {
		fresh, err = s.sealer.Seal(plain, binding)
	}
	if err != nil {
		p.Failed++
		if len(p.Errors) < maxResealErrors {
			p.Errors = append(p.Errors, fmt.Sprintf("%s %s/%s: %v", kind, v.Owner, v.ID, err))
		}
		return nil, false
	}
	return fresh, true
}

// resealBlob re-seals an asset's bytes in place. Assets are never rewritten after
// upload, so the atomic Put cannot lose a concurrent change.
func (s resealer) resealBlob(ctx context.Context, v SealedValue, p *ResealProgress) error {
	sealed, err := s.blobs.Get(ctx, v.BlobKey)
	if err != nil {
		// A listed asset's blob is written before its row and removed only with its
		// workspace, which the listing leaves out: missing, it is lost or this command
		// reads another blob store than the hub's (WSHUB_BLOBS, WSHUB_DATA_DIR). Either way the key
		// that sealed it cannot be dropped on this run's word.
		p.Failed++
		if len(p.Errors) < maxResealErrors {
			reason := err.Error()
			if errors.Is(err, ErrNoRows) {
				reason = "its bytes are not in the blob store (are WSHUB_BLOBS and WSHUB_DATA_DIR the hub's?)"
			}
			p.Errors = append(p.Errors, fmt.Sprintf("%s %s/%s: %s", SealedAsset, v.Owner, v.ID, reason))
		}
		return nil
	}
	v.Sealed = sealed
	fresh, ok := s.resealOne(SealedAsset, v, p)
	if !ok {
		return nil
	}
	if err := s.blobs.Put(ctx, v.BlobKey, fresh); err != nil {
		return err
	}
	p.Resealed++
	return nil
}
