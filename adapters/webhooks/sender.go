// Package webhooks is the outbound HTTP client of webhook delivery: it implements
// core.WebhookSender (api.md 6, behaviour.md "Webhooks").
package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/webhook"
)

const (
	// DefaultTimeout is api.md 6.4's limit for an acknowledgement.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxIdleConnsPerHost keeps a few warm connections to busy receivers.
	DefaultMaxIdleConnsPerHost = 16
	// maxDrain is how much of a response body is read (and thrown away) so the
	// connection can go back to the pool; a bigger body costs a new connection instead.
	maxDrain = 64 << 10
)

// Options configure a Sender. The zero value is the production configuration.
type Options struct {
	// Timeout bounds a whole attempt: dial, TLS, request, response headers and the
	// drained body. Zero means DefaultTimeout.
	Timeout time.Duration
	// AllowInsecure admits http targets and loopback/private addresses. Development and
	// tests only; it mirrors core.WebhookURLPolicy.AllowInsecure.
	AllowInsecure bool
	// Now is the clock for the signature's t. Nil means time.Now.
	Now func() time.Time
	// MaxIdleConnsPerHost is the per-receiver idle pool. Zero means the default.
	MaxIdleConnsPerHost int
	// TLSConfig replaces the default TLS settings (system roots, normal verification);
	// tests pass RootCAs for an httptest server. It is cloned.
	TLSConfig *tls.Config
	// Resolver replaces the system resolver; tests use it to point a name at loopback.
	// Nil means net.DefaultResolver.
	Resolver *net.Resolver
	// HubHost is the hub's own public host (""; none): an address it resolves to is
	// refused at every dial, whatever name led there.
	HubHost string
}

// Sender makes webhook delivery attempts. It is safe for concurrent use.
type Sender struct {
	client        *http.Client
	transport     *http.Transport
	timeout       time.Duration
	allowInsecure bool
	now           func() time.Time
}

var _ core.WebhookSender = (*Sender)(nil)

// New builds a Sender with its own connection pool.
func New(opts Options) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxIdleConnsPerHost <= 0 {
		opts.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	dialer := &net.Dialer{
		Timeout:   opts.Timeout,
		KeepAlive: 30 * time.Second,
		Resolver:  opts.Resolver,
	}
	if !opts.AllowInsecure {
		dialer.Control = checkDial
	}
	dial := dialer.DialContext
	if opts.HubHost != "" {
		g := &hubGuard{host: opts.HubHost, resolver: opts.Resolver, insecure: opts.AllowInsecure}
		if g.resolver == nil {
			g.resolver = net.DefaultResolver
		}
		dial = g.dial(*dialer)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.TLSConfig != nil {
		tlsConfig = opts.TLSConfig.Clone()
	}
	tr := &http.Transport{
		// No proxy, not even one from the environment: a proxy would make the
		// connection, and the dial check would see the proxy's address, not the target's.
		Proxy:               nil,
		DialContext:         dial,
		TLSClientConfig:     tlsConfig,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: opts.MaxIdleConnsPerHost,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: opts.Timeout,
		// The body is discarded, so asking for gzip would only add a header.
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &Sender{
		client: &http.Client{
			Transport: tr,
			// api.md 6.4: a redirect is a failure; following it could also lead a
			// request somewhere registration never checked.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		transport:     tr,
		timeout:       opts.Timeout,
		allowInsecure: opts.AllowInsecure,
		now:           opts.Now,
	}
}

// Send makes one attempt. Any 2xx whose status arrives within the timeout acknowledges;
// everything else is a failure described in Error.
func (s *Sender) Send(ctx context.Context, a core.WebhookAttempt) core.WebhookAttemptResult {
	if err := ctx.Err(); err != nil {
		return failed(0, stopped(err))
	}
	if why := s.checkTarget(a.URL); why != "" {
		return failed(0, why)
	}
	actx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, a.URL, bytes.NewReader(a.Body))
	if err != nil {
		return failed(0, "invalid URL")
	}
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(a.Secret, s.now(), a.Body))
	req.Header.Set(webhook.HeaderEventID, a.EventID)
	req.Header.Set(webhook.HeaderAttempt, strconv.Itoa(a.Attempt))
	req.Header.Set("User-Agent", webhook.UserAgent)
	req.Header.Set("Content-Type", "application/json")

	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		res := failed(0, describe(err))
		switch {
		case ctx.Err() != nil:
			res = failed(0, stopped(ctx.Err()))
		case actx.Err() != nil:
			res = failed(0, "timed out after "+s.timeout.String())
		}
		res.Duration = time.Since(start)
		return res
	}
	// The status has arrived in time, which is what acknowledges; the body is read only
	// for the delivery log's excerpt and for connection reuse, and its errors (a body cut
	// off, the timeout running out while draining) do not change the outcome.
	excerpt := make([]byte, core.MaxAttemptExcerptBytes)
	n, _ := io.ReadFull(resp.Body, excerpt)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	res := judge(resp)
	res.Duration, res.Excerpt = time.Since(start), excerpt[:n]
	return res
}

// CloseIdleConnections releases pooled connections (on hub shutdown).
func (s *Sender) CloseIdleConnections() { s.transport.CloseIdleConnections() }

// checkTarget refuses, before any connection, what the mode does not allow.
func (s *Sender) checkTarget(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "invalid URL"
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return ""
	case "http":
		if s.allowInsecure {
			return ""
		}
		return "http targets are not allowed"
	}
	return "only https targets are allowed"
}

func judge(resp *http.Response) core.WebhookAttemptResult {
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return core.WebhookAttemptResult{StatusCode: code}
	case code >= 300 && code <= 399 && resp.Header.Get("Location") != "":
		return failed(code, fmt.Sprintf("redirect (%d) not followed", code))
	}
	return failed(code, "HTTP "+strconv.Itoa(code))
}

// stopped words the caller's context ending: cancellation is the hub stopping.
func stopped(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out: the caller's deadline passed"
	}
	return "canceled: hub stopping"
}

func failed(code int, why string) core.WebhookAttemptResult {
	return core.WebhookAttemptResult{StatusCode: code, Error: why}
}
