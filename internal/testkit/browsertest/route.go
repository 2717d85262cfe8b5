package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// route is one Reroute: requests for URLs under from go to the same path under to.
type route struct{ from, to string }

// routes are the tab's Reroutes, and the one loop that answers the requests they pause.
type routes struct {
	mu   sync.Mutex
	list []route
	once sync.Once
}

// Reroute makes the tab's requests for URLs that start with from (a scheme, host
// and path prefix: "https://discord.com/") go to the same rest of the URL under
// to (a stand-in on loopback: "http://127.0.0.1:41234/") instead, over real HTTP
// from the test's process, and gives the browser the answer as if from had sent it:
// its status (a redirect is followed by the browser, not here), headers and body.
// The page cannot tell: its address stays from's, and so does its origin.
//
// It is how a browser test reaches a third party's stand-in where the app sends the
// browser to the third party's fixed address (an OAuth2 consent page). The request
// goes with the headers the browser gave it, its cookies for from among them, and
// the browser keeps a cookie the answer sets, for from. Reroutes hold until the
// browser closes.
func (b *Browser) Reroute(t testing.TB, from, to string) {
	t.Helper()
	b.routes.mu.Lock()
	b.routes.list = append(b.routes.list, route{from: from, to: to})
	patterns := make([]*fetch.RequestPattern, len(b.routes.list))
	for i, r := range b.routes.list {
		patterns[i] = &fetch.RequestPattern{URLPattern: fetchPattern(r.from) + "*", RequestStage: fetch.RequestStageRequest}
	}
	b.routes.mu.Unlock()

	// The subscription starts before Fetch.enable, so no paused request is missed;
	// it lasts as long as the browser, as the interception does.
	b.routes.once.Do(func() {
		paused := chromedp.Events(b.ctx, fetch.RequestPaused)
		go func() {
			for ev, err := range paused {
				if err != nil {
					return
				}
				// Each request on its own: a slow stand-in must not hold up the
				// page's other requests.
				go b.forward(ev)
			}
		}()
	})
	within(t, b, "reroute "+from+" to "+to, func(ctx context.Context) (struct{}, error) {
		_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: patterns})
		return struct{}{}, err
	})
}

// fetchPattern escapes Fetch's wildcards (* and ?, and its escape \) in a URL.
func fetchPattern(url string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`).Replace(url)
}

// forward answers one paused request from its route's stand-in, or fails it in the
// browser (which then shows its own error page) when the stand-in cannot be reached.
func (b *Browser) forward(ev fetch.EventRequestPaused) {
	// DefaultTimeout, not the Timeout a test may be changing meanwhile.
	ctx, cancel := context.WithTimeout(b.ctx, DefaultTimeout)
	defer cancel()
	status, header, body, err := b.fetchFor(ctx, ev.Request)
	if err != nil {
		b.log.printf("browsertest: reroute %s %s: %v", ev.Request.Method, ev.Request.URL, err)
		_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonFailed})
		return
	}
	var headers []*fetch.HeaderEntry
	for name, values := range header {
		for _, v := range values {
			headers = append(headers, &fetch.HeaderEntry{Name: name, Value: v})
		}
	}
	if _, err := chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID: ev.RequestID, ResponseCode: int64(status), ResponseHeaders: headers, Body: body,
	}); err != nil {
		b.log.printf("browsertest: reroute %s %s: answering the browser: %v", ev.Request.Method, ev.Request.URL, err)
	}
}

// noRedirects is the client of the reroutes: a redirect goes back to the browser,
// which follows it as it would the third party's.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// fetchFor sends the browser's request to its route's stand-in and reads the answer.
func (b *Browser) fetchFor(ctx context.Context, r *network.Request) (int, http.Header, []byte, error) {
	url, ok := b.routes.rewrite(r.URL)
	if !ok {
		return 0, nil, nil, fmt.Errorf("no route for it")
	}
	var body bytes.Buffer
	for _, e := range r.PostDataEntries {
		body.Write(e.Bytes)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, url, &body)
	if err != nil {
		return 0, nil, nil, err
	}
	for name, v := range r.Headers {
		switch strings.ToLower(name) {
		case "host", "accept-encoding":
			// The stand-in's host is its own; Go's transport asks for and
			// undoes its own compression, so the body goes back as plain bytes.
			continue
		}
		req.Header.Set(name, fmt.Sprint(v))
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return res.StatusCode, res.Header, data, nil
}

// rewrite is url under its route's stand-in, for the longest from that prefixes it.
func (rs *routes) rewrite(url string) (string, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	best := -1
	for i, r := range rs.list {
		if strings.HasPrefix(url, r.from) && (best < 0 || len(r.from) > len(rs.list[best].from)) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	r := rs.list[best]
	return r.to + strings.TrimPrefix(url, r.from), true
}
