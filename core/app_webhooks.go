package core

import (
	"context"
	"slices"
)

// The account's webhook endpoints, as its owners manage them in the app: the same use
// cases as the API's (one rule set), on the session's account, and logged.

// account reads the session's account, for the use cases the API shares.
func (s *App) account(ctx context.Context, a *AppSession) (*Account, error) {
	acct, err := s.store.GetAccount(ctx, a.AccountID)
	return acct, notFound(err, CodeNotFound, "the account is gone")
}

// ListWebhooks lists the account's endpoints (owners).
func (s *App) ListWebhooks(ctx context.Context, a *AppSession) ([]*Webhook, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.webhooks.ListWebhooks(ctx, acct)
}

// CreateWebhook registers an endpoint (owners) and returns its signing secret, to be
// shown once. As on the API, an account without cloud entitlement cannot.
func (s *App) CreateWebhook(ctx context.Context, a *AppSession, url, description string) (*Webhook, string, error) {
	if err := a.requireOwner(); err != nil {
		return nil, "", err
	}
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, "", err
	}
	if err := acct.checkEntitled(); err != nil {
		return nil, "", err
	}
	return s.webhooks.create(ctx, acct, CreateWebhookInput{URL: &url, Description: &description}, a.actor())
}

// DeleteWebhook removes an endpoint (owners).
func (s *App) DeleteWebhook(ctx context.Context, a *AppSession, id string) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	acct, err := s.account(ctx, a)
	if err != nil {
		return err
	}
	return s.webhooks.delete(ctx, acct, id, a.actor())
}

// WebhookLogView is a page of an endpoint's delivery log as the app shows it: with
// the endpoint, and the workspaces its events came from by id, titled, so the page
// names them and links them.
type WebhookLogView struct {
	*DeliveryLog
	Webhook    *Webhook
	Workspaces map[string]*Workspace
}

// Workspace is the workspace a delivery's event came from (nil: gone).
func (v *WebhookLogView) Workspace(d *Delivery) *Workspace { return v.Workspaces[d.WorkspaceID] }

// WebhookLog reads an endpoint's delivery log, a page at a time (owners).
func (s *App) WebhookLog(ctx context.Context, a *AppSession, webhookID string, query DeliveryQuery) (*WebhookLogView, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	acct, err := s.account(ctx, a)
	if err != nil {
		return nil, err
	}
	log, err := s.webhooks.ListDeliveries(ctx, acct, webhookID, query)
	if err != nil {
		return nil, err
	}
	v := &WebhookLogView{DeliveryLog: log, Workspaces: map[string]*Workspace{}}
	if v.Webhook, err = s.webhooks.store.GetWebhook(ctx, acct.ID, webhookID); err != nil {
		return nil, notFound(err, CodeWebhookNotFound, "no webhook with this id on this account")
	}
	v.Webhook.SealedSecret = nil
	var ids []string
	for _, d := range log.Deliveries {
		if d.WorkspaceID != "" && !slices.Contains(ids, d.WorkspaceID) {
			ids = append(ids, d.WorkspaceID)
		}
	}
	if len(ids) == 0 {
		return v, nil
	}
	list, err := s.store.WorkspacesByID(ctx, acct.ID, ids)
	if err != nil {
		return nil, err
	}
	s.withTitles(list...)
	for _, ws := range list {
		v.Workspaces[ws.ID] = ws
	}
	return v, nil
}

// Redeliver sends one of the endpoint's deliveries again (owners).
func (s *App) Redeliver(ctx context.Context, a *AppSession, webhookID, deliveryID string) error {
	if err := a.requireOwner(); err != nil {
		return err
	}
	acct, err := s.account(ctx, a)
	if err != nil {
		return err
	}
	_, err = s.webhooks.Redeliver(ctx, acct, webhookID, deliveryID)
	return err
}
