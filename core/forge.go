package core

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Forges: where a project's repository is hosted and reviewed. After a workspace's
// branch is pushed, the hub can open a pull (merge) request from it to the base.

// Forge kinds (wshub admin project add|update --forge). Gitea also covers Forgejo and
// Codeberg.
const (
	ForgeGitHub = "github"
	ForgeGitLab = "gitlab"
	ForgeGitea  = "gitea"
)

// ForgeKinds are the forge kinds, in the order they are listed.
var ForgeKinds = []string{ForgeGitHub, ForgeGitLab, ForgeGitea}

// Pull request settings of a project (--pull-requests): off keeps a pushed branch as
// it is (a person may still ask for one); draft and ready open one after the first push.
const (
	PullRequestsOff   = "off"
	PullRequestsDraft = "draft"
	PullRequestsReady = "ready"
)

// PullRequestModes are the pull request settings, the default first.
var PullRequestModes = []string{PullRequestsOff, PullRequestsDraft, PullRequestsReady}

// Pull request states as the hub shows them.
const (
	PullRequestOpen   = "open"
	PullRequestMerged = "merged"
	PullRequestClosed = "closed"
)

// PullRequest is a pull (merge) request as a forge answers it.
type PullRequest struct {
	Number int64
	URL    string
	// State is PullRequestOpen, PullRequestMerged or PullRequestClosed.
	State string
	Draft bool
	Head  string
	Base  string
}

// PullRequestChange is what the hub asks a forge to open.
type PullRequestChange struct {
	Head, Base, Title, Body string
	Draft                   bool
}

// Forge opens and reads pull requests on one kind of forge. It finds the API from the
// project's repository URL and authenticates with the project's credential (or the
// hub-wide token). Every refusal the forge gives is a *ForgeRefusal.
type Forge interface {
	// FindPullRequest returns the newest pull request whose head is the branch of the
	// project's own repository, in any state; ErrNoRows when there is none.
	FindPullRequest(ctx context.Context, p *Project, head string) (*PullRequest, error)
	// OpenPullRequest opens one.
	OpenPullRequest(ctx context.Context, p *Project, c PullRequestChange) (*PullRequest, error)
	// UpdatePullRequest sets an open pull request's body, and its title unless title
	// is empty (a reviewer's edit of the title is kept).
	UpdatePullRequest(ctx context.Context, p *Project, number int64, title, body string) (*PullRequest, error)
	// GetPullRequest reads one by number.
	GetPullRequest(ctx context.Context, p *Project, number int64) (*PullRequest, error)
}

// Forges are the hub's forge adapters by kind; a kind missing is not supported.
type Forges map[string]Forge

// ForgeRefusal is a forge's answer that it will not do what was asked, in words a
// person can act on: no permission, a protected branch, an archived repository, one
// already open from another tool. It is shown, never retried.
type ForgeRefusal struct {
	// Status is the forge's HTTP status (0 when the forge could not be reached).
	Status int
	// Reason is the forge's message, cleaned to one line.
	Reason string
}

func (e *ForgeRefusal) Error() string {
	if e.Status == 0 {
		return e.Reason
	}
	return fmt.Sprintf("%s (HTTP %d)", e.Reason, e.Status)
}

// ValidForge reports whether kind is a forge kind.
func ValidForge(kind string) bool { return slices.Contains(ForgeKinds, kind) }

// ValidPullRequestMode reports whether m is a pull request setting.
func ValidPullRequestMode(m string) bool { return slices.Contains(PullRequestModes, m) }

// forgeHosts are the hosts whose forge is known without being told.
var forgeHosts = map[string]string{
	"github.com": ForgeGitHub, "gitlab.com": ForgeGitLab,
	"codeberg.org": ForgeGitea, "gitea.com": ForgeGitea,
}

// DetectForge is the forge of a repository URL where the host says it unambiguously
// ("" otherwise: a self-hosted forge is named with --forge).
func DetectForge(repository string) string {
	host := ""
	if u, err := url.Parse(repository); err == nil && u.Host != "" {
		host = u.Hostname()
	} else if at := strings.Index(repository, "@"); at >= 0 {
		// scp-like: git@github.com:org/repo.git
		rest := repository[at+1:]
		if colon := strings.Index(rest, ":"); colon > 0 {
			host = rest[:colon]
		}
	}
	return forgeHosts[strings.ToLower(host)]
}
