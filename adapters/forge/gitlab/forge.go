// Package gitlab opens and reads merge requests on GitLab (gitlab.com or self-managed)
// through gitlab.com/gitlab-org/api/client-go. The API is /api/v4 on the repository's
// host; the project is named by its path, groups and subgroups kept.
package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/wshub/wshub/adapters/forge/remote"
	"github.com/wshub/wshub/core"
)

// Forge is core.Forge on GitLab.
type Forge struct {
	// Token gives the token a project's calls carry (a personal, project or group
	// access token, sent as PRIVATE-TOKEN): its own credential's or the hub-wide one.
	// An empty token is refused before GitLab is asked.
	Token func(ctx context.Context, p *core.Project) (string, error)
	// HTTPClient makes the calls (nil: one with a 30 s timeout). Nothing is retried:
	// client-go's retries are turned off, as a refusal is shown to a person.
	HTTPClient *http.Client
	// GuardedHTTPClient makes the calls of a project whose repository an account's
	// owner gave (nil: one that dials public addresses only), as the hub's git does.
	GuardedHTTPClient *http.Client
}

var _ core.Forge = (*Forge)(nil)

// defaultClient bounds a call that has no deadline of its own, and is shared so that
// its connections are.
var defaultClient = &http.Client{Timeout: 30 * time.Second}

// project is a project's repository as the API names it, with the token for it.
type project struct {
	base, path, token string
}

// locate derives the API's base and the project's path from a repository URL.
// GitLab under a relative URL root (https://host/gitlab/group/name) cannot be told
// from a group named gitlab; such an instance is not supported.
func locate(repository string) (base, path string, err error) {
	r, err := remote.Parse(repository)
	if err != nil {
		return "", "", err
	}
	return r.Origin() + "/api/v4", r.Path, nil
}

func (f *Forge) client(ctx context.Context, p *core.Project) (*gl.Client, project, error) {
	base, path, err := locate(p.Repository)
	if err != nil {
		return nil, project{}, err
	}
	if f.Token == nil {
		return nil, project{}, errors.New("gitlab: the forge has no token source")
	}
	token, err := f.Token(ctx, p)
	if err != nil {
		return nil, project{}, fmt.Errorf("gitlab: token for %s: %w", path, err)
	}
	if token == "" {
		return nil, project{}, &core.ForgeRefusal{Reason: fmt.Sprintf("there is no token for %s on %s: give the project a credential, or the hub a token",
			path, strings.TrimSuffix(base, "/api/v4"))}
	}
	hc := remote.Client(p, f.HTTPClient, f.GuardedHTTPClient, defaultClient)
	// A copy: client-go sets options on the client it is given (a cookie jar, a
	// transport's interceptors), and this one is shared.
	own := *hc
	c, err := gl.NewClient(token, gl.WithBaseURL(base), gl.WithHTTPClient(&own), gl.WithoutRetries(), gl.WithUserAgent("wshub"))
	if err != nil {
		return nil, project{}, fmt.Errorf("gitlab: client for %s: %w", base, err)
	}
	return c, project{base: base, path: path, token: token}, nil
}

// FindPullRequest returns the newest merge request from head in the project itself
// (not a fork's branch of the same name), in any state.
func (f *Forge) FindPullRequest(ctx context.Context, p *core.Project, head string) (*core.PullRequest, error) {
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	mrs, _, err := c.MergeRequests.ListProjectMergeRequests(pr.path, &gl.ListProjectMergeRequestsOptions{
		State: gl.Ptr("all"), SourceBranch: gl.Ptr(head), OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("desc"),
		// A fork's merge requests into the project come back too; a page holds the
		// newest of the project's own among them but for a crowd of forks.
		ListOptions: gl.ListOptions{PerPage: 20},
	}, gl.WithContext(ctx))
	if err != nil {
		return nil, refusal(err, pr)
	}
	for _, m := range mrs {
		if m.SourceProjectID == m.TargetProjectID {
			return mergeRequest(m), nil
		}
	}
	return nil, core.ErrNoRows
}

// draftPrefix is how GitLab is told a merge request is a draft: its title.
const draftPrefix = "Draft: "

// draftTitle is GitLab's own test of a draft's title.
var draftTitle = regexp.MustCompile(`(?i)^\s*(\[draft\]|\(draft\)|draft:|draft\s-\s)`)

// OpenPullRequest opens a merge request from c.Head to c.Base in the project; a draft
// is one whose title starts "Draft: ".
func (f *Forge) OpenPullRequest(ctx context.Context, p *core.Project, c core.PullRequestChange) (*core.PullRequest, error) {
	client, pr, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	title := c.Title
	if c.Draft && !draftTitle.MatchString(title) {
		title = draftPrefix + title
	}
	m, _, err := client.MergeRequests.CreateMergeRequest(pr.path, &gl.CreateMergeRequestOptions{
		Title: &title, Description: &c.Body, SourceBranch: &c.Head, TargetBranch: &c.Base,
	}, gl.WithContext(ctx))
	if err != nil {
		return nil, refusal(err, pr)
	}
	return mergeRequest(&m.BasicMergeRequest), nil
}

// UpdatePullRequest sets a merge request's title and description. GitLab reads a
// draft from the title, so a draft's new title keeps "Draft: ": the merge request is
// read first to know.
func (f *Forge) UpdatePullRequest(ctx context.Context, p *core.Project, number int64, title, body string) (*core.PullRequest, error) {
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	opts := &gl.UpdateMergeRequestOptions{Description: &body}
	if title != "" {
		cur, _, err := c.MergeRequests.GetMergeRequest(pr.path, number, nil, gl.WithContext(ctx))
		if err != nil {
			return nil, refusal(err, pr)
		}
		if (cur.Draft || draftTitle.MatchString(cur.Title)) && !draftTitle.MatchString(title) {
			title = draftPrefix + title
		}
		opts.Title = &title
	}
	m, _, err := c.MergeRequests.UpdateMergeRequest(pr.path, number, opts, gl.WithContext(ctx))
	if err != nil {
		return nil, refusal(err, pr)
	}
	return mergeRequest(&m.BasicMergeRequest), nil
}

// GetPullRequest reads a merge request by its iid (the number GitLab shows, !12).
func (f *Forge) GetPullRequest(ctx context.Context, p *core.Project, number int64) (*core.PullRequest, error) {
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	m, _, err := c.MergeRequests.GetMergeRequest(pr.path, number, nil, gl.WithContext(ctx))
	if err != nil {
		return nil, refusal(err, pr)
	}
	return mergeRequest(&m.BasicMergeRequest), nil
}

// mergeRequest maps GitLab's merge request: opened is open; locked (the moment of a
// merge) counts as closed until GitLab says merged.
func mergeRequest(m *gl.BasicMergeRequest) *core.PullRequest {
	state := core.PullRequestOpen
	switch m.State {
	case "merged":
		state = core.PullRequestMerged
	case "closed", "locked":
		state = core.PullRequestClosed
	}
	return &core.PullRequest{
		Number: m.IID, URL: m.WebURL, State: state, Draft: m.Draft || draftTitle.MatchString(m.Title),
		Head: m.SourceBranch, Base: m.TargetBranch,
	}
}

// refusal turns a failed call into a *core.ForgeRefusal in GitLab's words, on one
// line and never with the token. GitLab's bare status messages ("403 Forbidden") get
// a clause saying what they mean here; a call that could not reach GitLab is Status
// 0. The caller's own cancellation stays as it is.
func refusal(err error, pr project) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var resp *gl.ErrorResponse
	var ue *url.Error
	var out core.ForgeRefusal
	switch {
	case errors.As(err, &resp):
		out.Status = resp.StatusCode
		out.Reason = message(resp)
		switch out.Status {
		case http.StatusUnauthorized:
			out.Reason += " (the token is wrong, expired or revoked)"
		case http.StatusForbidden:
			out.Reason += fmt.Sprintf(" (the token may not do this in %s: merge requests need the Developer role, and an archived project takes none)", pr.path)
		case http.StatusNotFound:
			// client-go keeps no body of a 404; GitLab answers a private project the
			// token cannot see as one that does not exist.
			out.Reason = fmt.Sprintf("404 Not Found (%s, or the merge request, does not exist, or the token cannot see it)", pr.path)
		}
	case errors.As(err, &ue):
		out.Reason = fmt.Sprintf("could not reach GitLab at %s: %v", strings.TrimSuffix(pr.base, "/api/v4"), ue.Err)
	default:
		return fmt.Errorf("gitlab: %s: %w", pr.path, err)
	}
	out.Reason = clean(out.Reason, pr.token)
	return &out
}

// message is GitLab's message in words. GitLab's "message" is a string ("403
// Forbidden"), an array of sentences (a merge request's validation: "Another open
// merge request already exists for this source branch: !1"), or an object of a
// field's sentences ({"title":["can't be blank"]}); a few answers carry "error"
// instead.
func message(resp *gl.ErrorResponse) string {
	var body struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(resp.Body, &body) == nil {
		if s := words(body.Message, "; "); s != "" {
			return s
		}
		if body.Error != "" {
			return body.Error
		}
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// words puts a message in words: an array's sentences joined by sep, an object's
// fields each followed by its sentences ("title can't be blank, is too long").
func words(v any, sep string) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, e := range v {
			if s := words(e, sep); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, sep)
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if s := words(v[k], ", "); s != "" {
				parts = append(parts, k+" "+s)
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// clean puts a reason on one line, at most 500 characters, without the token.
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
