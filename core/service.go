// Package core holds wshub's domain: types, state rules, error codes and use cases, and
// the interfaces (ports) it needs from the outside. It imports the standard library only.
package core

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
)

// Deps are the adapters a Service runs on.
type Deps struct {
	Store     Store
	Sealer    Sealer // nil: no content key configured
	Blobs     BlobStore
	Providers Providers
	Agents    AgentCatalog
	Mirror    RepoMirror
	Clock     Clock
	Random    Random
	Webhooks  WebhookURLPolicy
	// Sender makes webhook delivery attempts (nil: the hub does not deliver).
	Sender WebhookSender
	// Machines and Runner drive workspaces (the runtime); Runtime tunes them.
	Machines Machines
	Runner   AgentRunner
	Runtime  RuntimeConfig
	// Turns is told of every recorded turn (nil: no one).
	Turns TurnObserver
	// Sealed lists and replaces sealed values for Reseal (nil: Reseal refuses).
	Sealed SealedStore
}

// Service is the set of use cases every front-end (REST, Slack, Discord, jobs) calls.
type Service struct {
	store     Store
	sealer    Sealer
	blobs     BlobStore
	providers Providers
	agents    AgentCatalog
	mirror    RepoMirror
	clock     Clock
	rand      Random
	webhooks  WebhookURLPolicy
	sender    WebhookSender
	machines  Machines
	runner    AgentRunner
	runtime   RuntimeConfig
	turns     TurnObserver
	sealed    SealedStore
	// unrecorded keeps finished turns the store could not take (turn_unrecorded.go).
	unrecorded unrecordedTurns
}

// NewService builds a Service; a nil Clock or Random falls back to the real ones.
func NewService(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = SystemClock{}
	}
	if d.Random == nil {
		d.Random = rand.Reader
	}
	return &Service{
		store: d.Store, sealer: d.Sealer, blobs: d.Blobs, providers: d.Providers,
		agents: d.Agents, mirror: d.Mirror, clock: d.Clock, rand: d.Random, webhooks: d.Webhooks,
		sender: d.Sender, machines: d.Machines, runner: d.Runner, runtime: d.Runtime, turns: d.Turns,
		sealed: d.Sealed,
	}
}

// inTx runs fn in a transaction and retries it when it lost a unique race (ErrConflict),
// so that the retry re-reads the winner and answers as if it had come second.
func (s *Service) inTx(ctx context.Context, fn func(q Queries) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = s.store.InTx(ctx, fn)
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("transaction kept conflicting: %w", err)
}

// notFound turns a store miss into the wire code; other errors pass through.
func notFound(err error, code, detail string) error {
	if errors.Is(err, ErrNoRows) {
		return &Error{Code: code, Detail: detail}
	}
	return err
}

// contended maps a row lock not taken in time to the documented 503.
func contended(err error) error {
	if errors.Is(err, ErrContended) {
		return Errorf(CodeWorkspaceStateContended, "the workspace is busy with another change; retry")
	}
	return err
}

func (s *Service) requireSealer() error {
	if s.sealer == nil {
		return Errorf(CodeEncryptionNotConfigured, "content encryption is not configured on this hub")
	}
	return nil
}

func (s *Service) seal(plaintext []byte, binding string) ([]byte, error) {
	if err := s.requireSealer(); err != nil {
		return nil, err
	}
	out, err := s.sealer.Seal(plaintext, binding)
	if err != nil {
		return nil, Errorf(CodeSealFailed, "content could not be sealed")
	}
	return out, nil
}

func (s *Service) open(sealed []byte, binding string) (string, error) {
	if err := s.requireSealer(); err != nil {
		return "", err
	}
	out, err := s.sealer.Open(sealed, binding)
	if err != nil {
		return "", fmt.Errorf("open sealed %s: %w", binding, err)
	}
	return string(out), nil
}

// Sealing bindings: each sealed value is bound to the ids that own it, so a value
// copied onto another row does not open.
func messageBinding(workspaceID, messageID string) string {
	return "message:" + workspaceID + ":" + messageID
}
func failureBinding(workspaceID, messageID string) string {
	return "failure:" + workspaceID + ":" + messageID
}
func assetBinding(workspaceID, assetID string) string {
	return "asset:" + workspaceID + ":" + assetID
}
func webhookBinding(accountID, webhookID string) string {
	return "webhook:" + accountID + ":" + webhookID
}
