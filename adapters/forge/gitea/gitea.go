// Package gitea is the forge adapter for Gitea (and Forgejo and Codeberg, which answer
// the same API): pull requests through Gitea's REST API, version 1.
package gitea

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/wshub/wshub/adapters/forge/remote"
	"github.com/wshub/wshub/core"
)

// Forge is core.Forge on Gitea.
type Forge struct {
	// Token returns the access token to call Gitea with for p: the project's credential
	// or the hub-wide token. "" is refused before any call, in words.
	Token func(ctx context.Context, p *core.Project) (string, error)
	// HTTPClient makes the calls. Nil is a client with a 30 s timeout, so a forge that
	// accepts a connection and never answers does not hold the caller past it even when
	// the context has no deadline.
	HTTPClient *http.Client
	// GuardedHTTPClient makes the calls of a project whose repository an account's
	// owner gave (nil: one that dials public addresses only), as the hub's git does.
	GuardedHTTPClient *http.Client
}

var _ core.Forge = (*Forge)(nil)

var defaultClient = &http.Client{Timeout: 30 * time.Second}

// FindPullRequest walks the repository's pull requests, in every state and newest
// first, for one whose head is branch of this same repository (not a fork's branch of
// the same name). Gitea's list has no filter by head, so at most maxPages pages of
// pageSize are read: a branch whose only pull request is older than the newest
// maxPages×pageSize is answered ErrNoRows, and opening one again is then refused by
// Gitea if it is still open.
func (f *Forge) FindPullRequest(ctx context.Context, p *core.Project, head string) (*core.PullRequest, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	for page := 1; page <= maxPages; page++ {
		prs, resp, err := c.ListRepoPullRequests(r.owner, r.name, sdk.ListPullRequestsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize},
			State:       sdk.StateAll,
		})
		if err != nil {
			return nil, refusal(ctx, r, token, "list the pull requests of "+r.String(), resp, err)
		}
		for _, pr := range prs {
			if pr.Head != nil && pr.Head.Ref == head && sameRepository(pr) {
				return pullRequest(pr), nil
			}
		}
		if len(prs) < pageSize {
			break
		}
	}
	return nil, core.ErrNoRows
}

// pageSize is Gitea's largest page by default ([api] MAX_RESPONSE_ITEMS); maxPages
// bounds FindPullRequest to the newest 1,000 pull requests.
const (
	pageSize = 50
	maxPages = 20
)

// sameRepository reports whether pr's head is a branch of its base repository.
func sameRepository(pr *sdk.PullRequest) bool {
	if pr.Base == nil || pr.Head == nil {
		return false
	}
	if pr.Head.RepoID != 0 || pr.Base.RepoID != 0 {
		return pr.Head.RepoID == pr.Base.RepoID
	}
	return pr.Head.Repository != nil && pr.Base.Repository != nil && pr.Head.Repository.ID == pr.Base.Repository.ID
}

// OpenPullRequest opens a pull request from c.Head into c.Base of the same repository.
// Gitea's API has no draft flag: a draft is a title that starts with a
// work-in-progress prefix, "WIP: " by Gitea's default (the prefixes are an instance
// setting; the web page's "mark ready" removes it), so a draft is opened with one.
// One already open from the same head is refused by Gitea (409, "pull request already
// exists for these targets"): callers look it up first with FindPullRequest.
func (f *Forge) OpenPullRequest(ctx context.Context, p *core.Project, ch core.PullRequestChange) (*core.PullRequest, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	title := ch.Title
	if ch.Draft && !isWIP(title) {
		title = wipPrefix + title
	}
	pr, resp, err := c.CreatePullRequest(r.owner, r.name, sdk.CreatePullRequestOption{
		Head: ch.Head, Base: ch.Base, Title: title, Body: ch.Body,
	})
	if err != nil {
		return nil, refusal(ctx, r, token, fmt.Sprintf("open a pull request from %s into %s of %s", ch.Head, ch.Base, r), resp, err)
	}
	return pullRequest(pr), nil
}

// UpdatePullRequest sets the title and body of pull request number (an empty title
// keeps the one it has). A draft stays a draft: when the pull request's title has a
// work-in-progress prefix now, the new title gets one too (and a pull request someone
// marked ready stays ready), so it reads the pull request first.
func (f *Forge) UpdatePullRequest(ctx context.Context, p *core.Project, number int64, title, body string) (*core.PullRequest, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("update pull request #%d of %s", number, r)
	cur, resp, err := c.GetPullRequest(r.owner, r.name, number)
	if err != nil {
		return nil, refusal(ctx, r, token, what, resp, err)
	}
	switch {
	case strings.TrimSpace(title) == "":
		title = cur.Title
	case isWIP(cur.Title) && !isWIP(title):
		title = wipPrefix + title
	}
	pr, resp, err := c.EditPullRequest(r.owner, r.name, number, sdk.EditPullRequestOption{Title: title, Body: &body})
	if err != nil {
		return nil, refusal(ctx, r, token, what, resp, err)
	}
	return pullRequest(pr), nil
}

// GetPullRequest reads pull request number.
func (f *Forge) GetPullRequest(ctx context.Context, p *core.Project, number int64) (*core.PullRequest, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	pr, resp, err := c.GetPullRequest(r.owner, r.name, number)
	if err != nil {
		return nil, refusal(ctx, r, token, fmt.Sprintf("read pull request #%d of %s", number, r), resp, err)
	}
	return pullRequest(pr), nil
}

// client is an SDK client for p's repository, bound to ctx, and the token it carries.
func (f *Forge) client(ctx context.Context, p *core.Project) (*sdk.Client, repository, string, error) {
	r, err := locate(p.Repository)
	if err != nil {
		return nil, r, "", err
	}
	if f.Token == nil {
		return nil, r, "", errors.New("gitea: the forge has no token source")
	}
	token, err := f.Token(ctx, p)
	if err != nil {
		return nil, r, "", fmt.Errorf("gitea: token for %s: %w", r, err)
	}
	if token == "" {
		return nil, r, "", &core.ForgeRefusal{Reason: fmt.Sprintf(
			"there is no token for %s on %s: give the project a credential, or the hub a token", r, r.api)}
	}
	hc := remote.Client(p, f.HTTPClient, f.GuardedHTTPClient, defaultClient)
	// SetGiteaVersion("") skips the SDK's version probe (a request of its own before
	// each call); every call made here is in Gitea since 1.11.
	c, err := sdk.NewClient(r.api, sdk.SetHTTPClient(hc), sdk.SetContext(ctx), sdk.SetGiteaVersion(""),
		sdk.SetToken(token), sdk.SetUserAgent("wshub"))
	if err != nil {
		return nil, r, "", fmt.Errorf("gitea: client for %s: %w", r.api, err)
	}
	return c, r, token, nil
}

// pullRequest is Gitea's pull request as the hub reads it.
func pullRequest(pr *sdk.PullRequest) *core.PullRequest {
	out := &core.PullRequest{
		Number: pr.Index,
		URL:    cmp.Or(pr.HTMLURL, pr.URL),
		State:  core.PullRequestOpen,
		// Gitea says draft from the title's work-in-progress prefix, with the
		// instance's own prefixes; older Gitea does not say, so the default's too.
		Draft: pr.Draft || isWIP(pr.Title),
	}
	switch {
	case pr.HasMerged:
		out.State = core.PullRequestMerged
	case pr.State == sdk.StateClosed:
		out.State = core.PullRequestClosed
	}
	if pr.Head != nil {
		out.Head = pr.Head.Ref
	}
	if pr.Base != nil {
		out.Base = pr.Base.Ref
	}
	return out
}

// wipPrefix is what OpenPullRequest puts before a draft's title: the first of Gitea's
// default work-in-progress prefixes ([repository.pull-request]
// WORK_IN_PROGRESS_PREFIXES = WIP:,[WIP]).
const wipPrefix = "WIP: "

// isWIP reports whether title starts with one of Gitea's default work-in-progress
// prefixes, as Gitea compares them (case-insensitively).
func isWIP(title string) bool {
	t := strings.ToUpper(title)
	return strings.HasPrefix(t, "WIP:") || strings.HasPrefix(t, "[WIP]")
}

// refusal turns a failed call into a *core.ForgeRefusal: Gitea's status and message,
// on one line, with what it means for the person who reads it; a call that reached no
// Gitea is Status 0. One stopped by the caller's context is the context's error (the
// hub gave up; the forge refused nothing), and anything else the SDK's. The token
// never appears in a refusal.
func refusal(ctx context.Context, r repository, token, doing string, resp *sdk.Response, err error) error {
	if resp == nil || resp.Response == nil {
		var ue *url.Error
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("gitea: %s: %w", doing, ctx.Err())
		case errors.As(err, &ue):
			// The URL is said once, here.
			return &core.ForgeRefusal{Reason: scrub(fmt.Sprintf("Gitea at %s could not be reached to %s: %v", r.api, doing, ue.Err), token)}
		}
		return fmt.Errorf("gitea: %s: %w", doing, err)
	}
	status := resp.StatusCode
	if status/100 == 2 {
		// Answered, but not with what Gitea's API answers.
		return &core.ForgeRefusal{Status: status, Reason: scrub(fmt.Sprintf(
			"the answer of %s to %s is not Gitea's API (is the forge kind right?): %v", r.api, doing, err), token)}
	}
	msg := err.Error()
	if msg == "" || strings.HasPrefix(msg, "unknown API error") {
		// No JSON message (an empty 403, a proxy's HTML page): the status says it.
		msg = strings.ToLower(http.StatusText(status))
	}
	return &core.ForgeRefusal{Status: status, Reason: scrub("Gitea refused to "+doing+": "+msg+hint(status), token)}
}

// hint says what a status usually means where Gitea's own words are terse.
func hint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return " (the token is missing, expired or not a Gitea access token)"
	case http.StatusForbidden:
		return " (the token's user needs write access to the repository, and the token the write:repository scope)"
	case http.StatusNotFound:
		return " (the repository, branch or pull request does not exist, or the token's user cannot see it)"
	case http.StatusLocked:
		return " (an archived repository is read-only)"
	}
	return ""
}

// scrub makes s one line of at most maxReason bytes, without token.
func scrub(s, token string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[token]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// maxReason bounds a refusal's reason: long enough for Gitea's messages, short enough
// to show in a list.
const maxReason = 500

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
