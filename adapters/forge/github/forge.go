// Package github opens and reads pull requests on GitHub and GitHub Enterprise
// Server through google/go-github, and mints GitHub App installation tokens through
// bradleyfalzon/ghinstallation. The API is found from the project's repository URL:
// github.com's is api.github.com, any other host's is /api/v3/ on that host.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/adapters/forge/remote"
	"github.com/wshub/wshub/core"
)

// Forge is core.Forge on GitHub.
type Forge struct {
	// Token gives the token a project's calls carry: its own credential's, a GitHub
	// App installation's (Apps.InstallationToken) or the hub-wide one. An empty token
	// is refused before GitHub is asked.
	Token func(ctx context.Context, p *core.Project) (string, error)
	// HTTPClient makes the calls (nil: one with a 30 s timeout). Nothing is retried:
	// a refusal is shown to a person, and a retry is theirs or the next push's.
	HTTPClient *http.Client
	// GuardedHTTPClient makes the calls of a project whose repository an account's
	// owner gave (nil: one that dials public addresses only), as the hub's git does.
	GuardedHTTPClient *http.Client
}

var _ core.Forge = (*Forge)(nil)

// defaultClient bounds a call that has no deadline of its own.
var defaultClient = &http.Client{Timeout: 30 * time.Second}

// repo is a project's repository as the API names it, with the token for it.
type repo struct {
	base, owner, name, token string
}

// locate derives the REST API's base and the repository's owner and name from a
// repository URL.
func locate(repository string) (base, owner, name string, err error) {
	r, err := remote.Parse(repository)
	if err != nil {
		return "", "", "", err
	}
	owner, name, ok := strings.Cut(r.Path, "/")
	if !ok || strings.Contains(name, "/") {
		return "", "", "", &core.ForgeRefusal{Reason: "the repository " + core.DisplayRepository(repository) +
			" is not a GitHub repository: its path must be owner/name"}
	}
	return apiBase(r), owner, name, nil
}

// apiBase is the REST API's base URL, with its trailing slash as go-github wants it:
// api.github.com for github.com, api.<host> for GitHub Enterprise Cloud with data
// residency (<name>.ghe.com), and /api/v3/ on the host for GitHub Enterprise Server.
func apiBase(r remote.Remote) string {
	switch host := r.Hostname(); {
	case host == "github.com" || host == "www.github.com":
		return "https://api.github.com/"
	case strings.HasSuffix(host, ".ghe.com"):
		return "https://api." + r.Host + "/"
	}
	return r.Origin() + "/api/v3/"
}

func (f *Forge) client(ctx context.Context, p *core.Project) (*gh.Client, repo, error) {
	base, owner, name, err := locate(p.Repository)
	if err != nil {
		return nil, repo{}, err
	}
	if f.Token == nil {
		return nil, repo{}, errors.New("github: the forge has no token source")
	}
	token, err := f.Token(ctx, p)
	if err != nil {
		return nil, repo{}, fmt.Errorf("github: token for %s/%s: %w", owner, name, err)
	}
	if token == "" {
		return nil, repo{}, &core.ForgeRefusal{Reason: fmt.Sprintf("there is no token for %s/%s on %s: give the project a credential, or the hub a token",
			owner, name, strings.TrimSuffix(base, "/"))}
	}
	hc := remote.Client(p, f.HTTPClient, f.GuardedHTTPClient, defaultClient)
	c, err := gh.NewClient(gh.WithHTTPClient(hc), gh.WithURLs(&base, nil), gh.WithAuthToken(token), gh.WithUserAgent("wshub"))
	if err != nil {
		return nil, repo{}, fmt.Errorf("github: client for %s: %w", base, err)
	}
	return c, repo{base: base, owner: owner, name: name, token: token}, nil
}

// FindPullRequest returns the newest pull request from head in the project's own
// repository (head=owner:branch), in any state.
func (f *Forge) FindPullRequest(ctx context.Context, p *core.Project, head string) (*core.PullRequest, error) {
	c, r, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	prs, _, err := c.PullRequests.List(ctx, r.owner, r.name, &gh.PullRequestListOptions{
		State: "all", Head: r.owner + ":" + head, Sort: "created", Direction: "desc",
		ListOptions: gh.ListOptions{PerPage: 1},
	})
	if err != nil {
		return nil, refusal(err, r)
	}
	if len(prs) == 0 {
		return nil, core.ErrNoRows
	}
	return pull(prs[0]), nil
}

// OpenPullRequest opens a pull request from c.Head, a branch of the project's own
// repository, to c.Base.
func (f *Forge) OpenPullRequest(ctx context.Context, p *core.Project, c core.PullRequestChange) (*core.PullRequest, error) {
	client, r, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	pr, _, err := client.PullRequests.Create(ctx, r.owner, r.name, &gh.NewPullRequest{
		Title: &c.Title, Head: &c.Head, Base: &c.Base, Body: &c.Body, Draft: &c.Draft,
	})
	if err != nil {
		return nil, refusal(err, r)
	}
	return pull(pr), nil
}

// UpdatePullRequest sets a pull request's title and body; its draft state and base
// stay as they are.
func (f *Forge) UpdatePullRequest(ctx context.Context, p *core.Project, number int64, title, body string) (*core.PullRequest, error) {
	c, r, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	edit := &gh.PullRequest{Body: &body}
	if title != "" {
		edit.Title = &title
	}
	pr, _, err := c.PullRequests.Edit(ctx, r.owner, r.name, int(number), edit)
	if err != nil {
		return nil, refusal(err, r)
	}
	return pull(pr), nil
}

// GetPullRequest reads a pull request by number.
func (f *Forge) GetPullRequest(ctx context.Context, p *core.Project, number int64) (*core.PullRequest, error) {
	c, r, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	pr, _, err := c.PullRequests.Get(ctx, r.owner, r.name, int(number))
	if err != nil {
		return nil, refusal(err, r)
	}
	return pull(pr), nil
}

// pull maps GitHub's pull request. GitHub has two states, open and closed; a closed
// one that was merged has merged_at (merged itself is left out of lists).
func pull(pr *gh.PullRequest) *core.PullRequest {
	state := core.PullRequestOpen
	if pr.GetState() == "closed" {
		state = core.PullRequestClosed
		if pr.GetMerged() || pr.MergedAt != nil {
			state = core.PullRequestMerged
		}
	}
	return &core.PullRequest{
		Number: int64(pr.GetNumber()), URL: pr.GetHTMLURL(), State: state, Draft: pr.GetDraft(),
		Head: pr.GetHead().GetRef(), Base: pr.GetBase().GetRef(),
	}
}

// refusal turns a failed call into a *core.ForgeRefusal in GitHub's words: its
// message and each of a 422's errors, on one line and never with the token. A call
// that could not reach GitHub is Status 0. The caller's own cancellation stays as it
// is.
func refusal(err error, r repo) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var (
		resp  *gh.ErrorResponse
		limit *gh.RateLimitError
		abuse *gh.AbuseRateLimitError
		ue    *url.Error
		out   core.ForgeRefusal
	)
	switch {
	case errors.As(err, &limit):
		out.Status = statusOf(limit.Response)
		out.Reason = "GitHub's rate limit for this token is used up until " + limit.Rate.Reset.UTC().Format("15:04 UTC")
	case errors.As(err, &abuse):
		out.Status = statusOf(abuse.Response)
		out.Reason = "GitHub's secondary rate limit: " + abuse.Message
	case errors.As(err, &resp):
		out.Status = statusOf(resp.Response)
		out.Reason = message(resp, out.Status, r)
	case errors.As(err, &ue):
		out.Reason = fmt.Sprintf("could not reach GitHub at %s: %v", strings.TrimSuffix(r.base, "/"), ue.Err)
	default:
		return fmt.Errorf("github: %s/%s: %w", r.owner, r.name, err)
	}
	out.Reason = clean(out.Reason, r.token)
	return &out
}

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// message is GitHub's message with its errors' details: "Validation Failed: A pull
// request already exists for owner:branch." An error without a message (a field's
// code) is put in words.
func message(resp *gh.ErrorResponse, status int, r repo) string {
	msg := resp.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	var details []string
	for _, e := range resp.Errors {
		switch {
		case e.Message != "":
			details = append(details, e.Message)
		case e.Field != "":
			details = append(details, e.Field+" "+codeWords(e.Code))
		case e.Code != "":
			details = append(details, codeWords(e.Code))
		}
	}
	if len(details) > 0 {
		msg += ": " + strings.Join(details, "; ")
	}
	if status == http.StatusNotFound {
		// GitHub answers a private repository the token cannot see as it answers one
		// that does not exist.
		msg += fmt.Sprintf(" (%s/%s does not exist, or the token cannot see it)", r.owner, r.name)
	}
	return msg
}

// codeWords are GitHub's validation codes (https://docs.github.com/rest#client-errors)
// in words.
func codeWords(code string) string {
	switch code {
	case "missing":
		return "does not exist"
	case "missing_field":
		return "is missing"
	case "invalid":
		return "is not valid"
	case "already_exists":
		return "already exists"
	case "unprocessable":
		return "could not be processed"
	}
	return code
}

// clean puts a reason on one line, at most 500 characters, without the token (GitHub
// does not echo it; this holds if it ever does).
func clean(reason, token string) string {
	if token != "" {
		reason = strings.ReplaceAll(reason, token, "[token]")
	}
	reason = strings.Join(strings.Fields(reason), " ")
	if r := []rune(reason); len(r) > 500 {
		reason = string(r[:499]) + "…"
	}
	return reason
}
