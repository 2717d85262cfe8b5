package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// CreateWorkspace starts a workspace (api.md 4.1). The call is retried safely: the
// request carries an idempotency key (req.IdempotencyKey, or a generated one).
func (c *Client) CreateWorkspace(ctx context.Context, req CreateWorkspaceRequest) (*Workspace, error) {
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = NewIdempotencyKey()
	}
	var out struct {
		Workspace Workspace `json:"workspace"`
	}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/api/workspaces", json: req,
		header: map[string]string{"Idempotency-Key": req.IdempotencyKey}}, &out); err != nil {
		return nil, err
	}
	return &out.Workspace, nil
}

// ListWorkspaces lists the account's workspaces, oldest first (api.md 4.2).
func (c *Client) ListWorkspaces(ctx context.Context) ([]Workspace, error) {
	var out struct {
		Workspaces []Workspace `json:"workspaces"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/workspaces"}, &out)
	return out.Workspaces, err
}

// GetWorkspace reads one workspace (api.md 4.3).
func (c *Client) GetWorkspace(ctx context.Context, id string) (*Workspace, error) {
	var out struct {
		Workspace Workspace `json:"workspace"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/workspaces/" + url.PathEscape(id)}, &out); err != nil {
		return nil, err
	}
	return &out.Workspace, nil
}

// SendMessage sends a message to the workspace's agent (api.md 4.4), with an
// idempotency key like CreateWorkspace.
func (c *Client) SendMessage(ctx context.Context, workspaceID string, req SendMessageRequest) (*SendReceipt, error) {
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = NewIdempotencyKey()
	}
	var out SendReceipt
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/messages",
		json: req, header: map[string]string{"Idempotency-Key": req.IdempotencyKey}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListMessages reads one page of the conversation after afterSeq (api.md 4.5); limit
// 0 takes the hub's default (200).
func (c *Client) ListMessages(ctx context.Context, workspaceID string, afterSeq int64, limit int) (*MessagePage, error) {
	q := url.Values{}
	if afterSeq > 0 {
		q.Set("afterSeq", strconv.FormatInt(afterSeq, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out MessagePage
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/messages",
		query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UploadAttachment stores a file in the workspace for a later message (api.md 4.6),
// with an idempotency key like CreateWorkspace.
func (c *Client) UploadAttachment(ctx context.Context, workspaceID string, up Upload) (*Asset, error) {
	if up.IdempotencyKey == "" {
		up.IdempotencyKey = NewIdempotencyKey()
	}
	h := map[string]string{"Idempotency-Key": up.IdempotencyKey}
	if up.Name != "" {
		h["X-Service-File-Name"] = up.Name
	}
	data := up.Data
	if data == nil {
		data = []byte{}
	}
	var out struct {
		Asset Asset `json:"asset"`
	}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/attachments",
		raw: data, contentType: up.ContentType, header: h}, &out); err != nil {
		return nil, err
	}
	return &out.Asset, nil
}

// ListProjects lists the account's projects (api.md 4.7).
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	var out struct {
		Projects []Project `json:"projects"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/projects"}, &out)
	return out.Projects, err
}

// ListAgents lists the agent ids usable in CreateWorkspace (api.md 4.8).
func (c *Client) ListAgents(ctx context.Context) ([]string, error) {
	var out struct {
		Agents []string `json:"agents"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/agents"}, &out)
	return out.Agents, err
}

// ListProviders lists the machine providers, and whether the account is entitled
// (api.md 4.9).
func (c *Client) ListProviders(ctx context.Context) ([]Provider, bool, error) {
	var out struct {
		Providers []Provider `json:"providers"`
		Entitled  bool       `json:"entitled"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/providers"}, &out)
	return out.Providers, out.Entitled, err
}

// CreateWebhook registers an endpoint and returns it with its signing secret, which
// the hub shows this once (api.md 4.10). It is not retried: a retry could register
// the endpoint twice.
func (c *Client) CreateWebhook(ctx context.Context, endpoint, description string) (*Webhook, string, error) {
	var out struct {
		Webhook Webhook `json:"webhook"`
		Secret  string  `json:"secret"`
	}
	body := map[string]string{"url": endpoint}
	if description != "" {
		body["description"] = description
	}
	once := *c
	once.retry.Attempts = 1
	if _, err := once.do(ctx, request{method: http.MethodPost, path: "/v1/api/webhooks", json: body}, &out); err != nil {
		return nil, "", err
	}
	return &out.Webhook, out.Secret, nil
}

// ListWebhooks lists the registered endpoints in registration order (api.md 4.11).
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var out struct {
		Webhooks []Webhook `json:"webhooks"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/webhooks"}, &out)
	return out.Webhooks, err
}

// DeleteWebhook removes an endpoint and cancels its pending deliveries (api.md 4.12).
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/v1/api/webhooks/" + url.PathEscape(id)}, nil)
	return err
}

// ListDeliveries reads one page of an endpoint's delivery log, newest first (an
// extension): before is the previous page's NextBefore ("" for the newest), limit 0
// takes the hub's default (50).
func (c *Client) ListDeliveries(ctx context.Context, webhookID, before string, limit int) (*DeliveryPage, error) {
	q := url.Values{}
	if before != "" {
		q.Set("before", before)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out DeliveryPage
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/webhooks/" + url.PathEscape(webhookID) + "/deliveries",
		query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Redeliver makes a delivery due now for one more attempt (an extension) and returns
// it. A retried call is harmless: asking again before the attempt adds nothing.
func (c *Client) Redeliver(ctx context.Context, webhookID, deliveryID string) (*Delivery, error) {
	var out struct {
		Delivery Delivery `json:"delivery"`
	}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/api/webhooks/" + url.PathEscape(webhookID) +
		"/deliveries/" + url.PathEscape(deliveryID) + "/redeliver"}, &out); err != nil {
		return nil, err
	}
	return &out.Delivery, nil
}
