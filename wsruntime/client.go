package wsruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// client calls the hub's runtime API. Calls that fail on the way (connection refused
// or cut, a 5xx, a timeout) are retried with backoff until ctx ends, or until no call
// has reached the hub for reach.after (a *hubLostError): the hub may be restarting,
// and every call is safe to repeat, but a hub that died for good must not be called
// forever. A 4xx is final.
type client struct {
	url     string // the hub's base URL, without the runtime prefix
	token   string
	session string
	http    *http.Client
	backoff core.Backoff
	reach   *reach
	// onLost is told once a call finds the hub lost (Run ends everything with it).
	onLost func(error)
}

// hubError is a final answer of the hub: its status and error code.
type hubError struct {
	Status int
	Code   string
	Detail string
}

func (e *hubError) Error() string {
	if e.Code == "" { // not the hub's own words: a proxy in front of it, most likely
		return fmt.Sprintf("hub answered %d", e.Status)
	}
	return fmt.Sprintf("hub answered %d %s: %s", e.Status, e.Code, e.Detail)
}

// stops reports whether err means this runtime must stop: its token was revoked, a
// newer runtime took over, or the workspace no longer runs.
func stops(err error) bool {
	var he *hubError
	if !errors.As(err, &he) {
		return false
	}
	switch he.Code {
	case core.CodeRuntimeTokenInvalid, core.CodeRuntimeSuperseded, core.CodeRuntimeStopped:
		return true
	}
	return false
}

// request is one call: a method, a path under the runtime prefix and a body.
type request struct {
	method, path string
	json         any       // a JSON body, or
	body         io.Reader // raw bytes (replayable: a *bytes.Reader or *os.File seeked back)
	contentType  string
}

// do makes the call, retrying failures on the way, and returns the successful
// response (the caller closes its body).
func (c *client) do(ctx context.Context, r request) (*http.Response, error) {
	var payload []byte
	if r.json != nil {
		var err error
		if payload, err = json.Marshal(r.json); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, r, payload)
		var he *hubError
		final := errors.As(err, &he) && he.Status < 500
		if err == nil || final {
			c.reach.answered()
		}
		if err == nil {
			return resp, nil
		}
		if final {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if down := c.reach.failed(); down > c.reach.after {
			lost := &hubLostError{url: c.url, down: down, after: c.reach.after, last: err}
			if c.onLost != nil {
				c.onLost(lost)
			}
			return nil, lost
		}
		if err := c.backoff.Wait(ctx, attempt, nil); err != nil {
			return nil, err
		}
	}
}

func (c *client) once(ctx context.Context, r request, payload []byte) (*http.Response, error) {
	var body io.Reader
	switch {
	case payload != nil:
		body = bytes.NewReader(payload)
	case r.body != nil:
		if s, ok := r.body.(io.Seeker); ok {
			if _, err := s.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
		}
		body = r.body
	}
	req, err := http.NewRequestWithContext(ctx, r.method, strings.TrimRight(c.url, "/")+runtimewire.Prefix+r.path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set(runtimewire.SessionHeader, c.session)
	switch {
	case payload != nil:
		req.Header.Set("Content-Type", "application/json")
	case r.contentType != "":
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e runtimewire.Error
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
	return nil, &hubError{Status: resp.StatusCode, Code: e.Error, Detail: e.Detail}
}

// call makes a JSON call and decodes the answer into out (nil: ignored); it reports
// whether the hub answered with content (false for 204).
func (c *client) call(ctx context.Context, r request, out any) (bool, error) {
	resp, err := c.do(ctx, r)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return false, nil
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return true, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out); err != nil {
		return false, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	return true, nil
}
