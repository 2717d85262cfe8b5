package core

import (
	"context"
	"strings"
	"unicode"
)

// CreateWebhookInput is a webhook registration request.
type CreateWebhookInput struct {
	URL         *string
	Description *string
}

// CreateWebhook registers an endpoint with the request's API key and returns it with
// its signing secret, which is shown only here.
func (s *Webhooks) CreateWebhook(ctx context.Context, acct *Account, in CreateWebhookInput) (*Webhook, string, error) {
	return s.create(ctx, acct, in, keyActor(acct))
}

// create registers an endpoint for by, and logs it in the same transaction. The
// account row lock makes the 20-endpoint limit exact under races.
func (s *Webhooks) create(ctx context.Context, acct *Account, in CreateWebhookInput, by actor) (*Webhook, string, error) {
	if in.URL == nil {
		return nil, "", Errorf(CodeInvalidWebhookURL, "url is required")
	}
	url, err := s.policy.CheckWebhookURL(*in.URL)
	if err != nil {
		return nil, "", err
	}
	if err := s.policy.checkNotHub(ctx, url); err != nil {
		return nil, "", err
	}
	desc := ""
	if in.Description != nil {
		desc = strings.TrimSpace(*in.Description)
		if chars(desc) > MaxWebhookDescChars {
			return nil, "", Errorf(CodeInvalidWebhookDesc, "description must be at most 200 characters")
		}
		// A label is one line of text; a NUL would also fail in the store's text column.
		if strings.IndexFunc(desc, unicode.IsControl) >= 0 {
			return nil, "", Errorf(CodeInvalidWebhookDesc, "description must not contain control characters")
		}
	}
	wh := &Webhook{ID: NewID(s.rand, PrefixWebhook), AccountID: acct.ID, URL: url, Description: desc, CreatedAt: s.clock.Now()}
	secret := NewWebhookSecret(s.rand)
	err = inTx(ctx, s.store, func(q Queries) error {
		if err := q.LockAccount(ctx, acct.ID); err != nil {
			return err
		}
		n, err := q.CountWebhooks(ctx, acct.ID)
		if err != nil {
			return err
		}
		if n >= MaxWebhooks {
			return Errorf(CodeWebhookLimitReached, "this account already has 20 webhook endpoints")
		}
		if wh.SealedSecret, err = s.seal([]byte(secret), SealedWebhookSecret.binding(acct.ID, wh.ID)); err != nil {
			return err
		}
		if err := q.InsertWebhook(ctx, wh); err != nil {
			return err
		}
		return by.audit(ctx, q, acct.ID, wh.CreatedAt, AuditWebhookCreated, wh.ID, wh.URL)
	})
	if err != nil {
		return nil, "", err
	}
	return wh, secret, nil
}

// ListWebhooks returns the account's endpoints in registration order.
func (s *Webhooks) ListWebhooks(ctx context.Context, acct *Account) ([]*Webhook, error) {
	return s.store.ListWebhooks(ctx, acct.ID)
}

// DeleteWebhook removes an endpoint with the request's API key.
func (s *Webhooks) DeleteWebhook(ctx context.Context, acct *Account, id string) error {
	return s.delete(ctx, acct, id, keyActor(acct))
}

// delete removes an endpoint for by, and logs it; its pending deliveries go with it
// (the same statement, through the foreign key).
func (s *Webhooks) delete(ctx context.Context, acct *Account, id string, by actor) error {
	return s.store.InTx(ctx, func(q Queries) error {
		ok, err := q.DeleteWebhook(ctx, acct.ID, id)
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(CodeWebhookNotFound, "no webhook with this id on this account")
		}
		return by.audit(ctx, q, acct.ID, s.clock.Now(), AuditWebhookDeleted, id, "")
	})
}

// Webhooks are the use cases of webhook endpoints (REST) and of the delivery worker.
type Webhooks struct {
	kernel
	store  webhooksStore
	policy WebhookURLPolicy
}

// Deliveries are the webhook delivery worker's use cases: claim due deliveries and
// attempt them.
type Deliveries struct {
	kernel
	logger
	store webhooksStore
	// sender makes delivery attempts (nil: the hub does not deliver).
	sender WebhookSender
}

// webhooksStore is what Webhooks reads and writes.
type webhooksStore interface {
	TxStore
	AccountQueries
	WebhookQueries
	DeliveryQueries
}
