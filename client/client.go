// Package client is a Go client for wshub's REST API (/v1/api): typed requests and
// answers, retries that are safe (every create, send and upload carries an idempotency
// key, generated when the caller gives none), typed errors carrying the API's code, an
// iterator over a conversation, and WaitForReply, which turns the asynchronous loop
// (send, then wait for the agent's turn) into one call.
//
// Webhook deliveries are verified with the sibling package
// github.com/wshub/wshub/webhook (ConstructEvent).
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one hub with one API key. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	key   string
	http  *http.Client
	retry Retry
	agent string
}

// Retry says how a call that failed in a way that may pass (HTTP 500, 502, 503, 504,
// 429, or the network) is tried again: up to Attempts in all, waiting from Min,
// doubling to Max, each wait jittered by up to half. The context bounds it all.
type Retry struct {
	Attempts int
	Min, Max time.Duration
}

// DefaultRetry tries a call 5 times over about 10 seconds.
var DefaultRetry = Retry{Attempts: 5, Min: 250 * time.Millisecond, Max: 4 * time.Second}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, proxies, TLS).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetry sets the retry policy; Retry{Attempts: 1} turns retries off.
func WithRetry(r Retry) Option { return func(c *Client) { c.retry = r } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.agent = ua } }

// New returns a client for the hub at baseURL (for example https://wshub.example.com)
// with an API key (svc_...).
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	// The API's own path is accepted too (the README's curl examples use it), and
	// dropped: the client adds it to every call.
	u, err := url.Parse(strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1/api"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an http(s) URL", baseURL)
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("client: no API key")
	}
	c := &Client{base: u, key: apiKey, http: &http.Client{Timeout: 60 * time.Second}, retry: DefaultRetry,
		agent: "wshub-go-client/1"}
	for _, o := range opts {
		o(c)
	}
	if c.retry.Attempts < 1 {
		c.retry.Attempts = 1
	}
	return c, nil
}

// Error is an error answer of the API: its HTTP status, code (api.md section 7) and
// detail. Use errors.As to read it.
type Error struct {
	Status int
	Code   string
	Detail string
	// RetryAfter is the hub's Retry-After (a rate-limited call), 0 when it sent none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("wshub: %d %s: %s", e.Status, e.Code, e.Detail)
	}
	return fmt.Sprintf("wshub: %d %s", e.Status, e.Code)
}

// Temporary reports whether the failure is on the hub's side and worth retrying later:
// a 5xx, or a 429 rate limit (not a quota, which waiting does not lift).
func (e *Error) Temporary() bool {
	return e.Status == http.StatusTooManyRequests && e.Code != codeQuotaExceeded || e.Status >= 500
}

// codeQuotaExceeded: a 429 for an account at its quota, not a rate limit.
const codeQuotaExceeded = "quota_exceeded"

// maxRetryAfter bounds how long one wait for a Retry-After may be.
const maxRetryAfter = time.Minute

// NewIdempotencyKey returns a random key for create, send and upload.
func NewIdempotencyKey() string {
	b := make([]byte, 18)
	_, _ = io.ReadFull(cryptoRand{}, b)
	return "go-" + base64.RawURLEncoding.EncodeToString(b)
}

type cryptoRand struct{}

func (cryptoRand) Read(p []byte) (int, error) { return rand.Read(p) }

// request is one call: a JSON body or raw bytes, extra headers.
type request struct {
	method, path string
	query        url.Values
	json         any
	raw          []byte
	contentType  string
	header       map[string]string
}

// do sends req, retrying what may pass, and decodes a 2xx answer into out.
func (c *Client) do(ctx context.Context, req request, out any) (int, error) {
	var body []byte
	ctype := req.contentType
	if req.json != nil {
		b, err := json.Marshal(req.json)
		if err != nil {
			return 0, fmt.Errorf("client: encode request: %w", err)
		}
		body, ctype = b, "application/json"
	} else if req.raw != nil {
		body = req.raw
	}
	u := *c.base
	u.Path += req.path
	u.RawQuery = req.query.Encode()
	delay := c.retry.Min
	for attempt := 1; ; attempt++ {
		status, err := c.once(ctx, req.method, u.String(), ctype, body, req.header, out)
		if err == nil || attempt >= c.retry.Attempts || !retryable(err) {
			return status, err
		}
		wait := delay/2 + time.Duration(mrand.Int64N(int64(delay/2)+1))
		if e := (*Error)(nil); errors.As(err, &e) && e.RetryAfter > wait {
			wait = min(e.RetryAfter, maxRetryAfter) // the hub said when: sooner is refused again
		}
		select {
		case <-ctx.Done():
			return status, errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		delay = min(2*delay, c.retry.Max)
	}
}

func (c *Client) once(ctx context.Context, method, u, ctype string, body []byte, header map[string]string, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	hr.Header.Set("Authorization", "Bearer "+c.key)
	hr.Header.Set("User-Agent", c.agent)
	hr.Header.Set("Accept", "application/json")
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode}
		var eb struct {
			Error  string `json:"error"`
			Detail string `json:"detail"`
		}
		if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
			e.Code, e.Detail = eb.Error, eb.Detail
		} else {
			e.Code = http.StatusText(resp.StatusCode)
		}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		return resp.StatusCode, e
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("client: decode %s answer: %w", u, err)
		}
	}
	return resp.StatusCode, nil
}

// retryable: the hub's side (5xx, 429) or the network; never a context's end.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.Status {
		case http.StatusTooManyRequests:
			return e.Code != codeQuotaExceeded
		case http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
