package forge

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wshub/wshub/core"
)

// event is what the hub reads of a forge's delivery, the same for the three forges.
type event struct {
	// Repositories are the URLs the payload gives its repository (web, https clone,
	// ssh clone): the project's may be any of them.
	Repositories []string
	// NewIssueComment: a comment was just written on an issue (not a pull request).
	NewIssueComment bool
	Issue           int64
	Title, Body     string
	CommentID       int64
	Comment         string
	// Pull is the pull request a comment or review was just written on (0: none).
	// Review says it is a review's, a line comment or a summary, which is a follow-up
	// without the handle; Path and Line place a line comment (Line 0: the file's).
	// Kind names the comment's kind in its idempotency key: the forges number
	// comments, review comments and reviews apart.
	Pull   int64
	Review bool
	Path   string
	Line   int64
	Kind   string
	// Thread is a line comment's review thread, where its answer goes: GitHub's first
	// review comment of the thread, GitLab's discussion ("": none).
	Thread string
	// Labeled are the labels just given to an issue (all its labels where the forge
	// does not say which one was added); the event's author gave them.
	Labeled []string
	// Login, UserID and Profile are the comment's author on the forge; Bot says the
	// forge marks them a bot (GitHub's apps).
	Login   string
	UserID  int64
	Profile string
	Bot     bool
	// Check is a check that failed on a commit (nil: none, or it did not fail).
	Check *failedCheck
	// Installation is the GitHub App installation that sent it (0: none, or not an App).
	Installation int64
}

// failedCheck is a check run, a commit status or a pipeline that failed on commit SHA:
// Key names it apart from the forge's other checks (its kind and id), Output is what
// the forge says of it (GitHub's output, a status's description, GitLab's failed jobs).
type failedCheck struct {
	Name, Key, SHA, Output string
}

func (e *event) threadKey() string {
	key := ""
	if len(e.Repositories) > 0 {
		key = core.RepositoryKey(e.Repositories[0])
	}
	switch {
	case e.Check != nil:
		// A commit's checks one after another: the limit counts them in order.
		key += "#commit/" + e.Check.SHA
	case e.Pull != 0:
		key += "#" + core.PullThreadID(e.Pull)
	case e.Issue != 0:
		key += "#" + strconv.FormatInt(e.Issue, 10)
	}
	return key
}

// hubPayload is the part of GitHub's and Gitea's deliveries the hub reads: Gitea's
// follow GitHub's shape.
type hubPayload struct {
	Action string `json:"action"`
	Issue  *struct {
		Number      int64           `json:"number"`
		Title       string          `json:"title"`
		Body        string          `json:"body"`
		PullRequest json.RawMessage `json:"pull_request"`
		Labels      []hubLabel      `json:"labels"`
	} `json:"issue"`
	Comment *struct {
		ID   int64   `json:"id"`
		Body string  `json:"body"`
		User hubUser `json:"user"`
		// A review comment's place (GitHub): line is null on an outdated diff.
		Path         string `json:"path"`
		Line         *int64 `json:"line"`
		OriginalLine *int64 `json:"original_line"`
		InReplyTo    int64  `json:"in_reply_to_id"`
	} `json:"comment"`
	// Review is GitHub's submitted review, or Gitea's (content, the sender its author).
	Review *struct {
		ID      int64   `json:"id"`
		Body    string  `json:"body"`
		Content string  `json:"content"`
		User    hubUser `json:"user"`
	} `json:"review"`
	PullRequest *struct {
		Number int64 `json:"number"`
	} `json:"pull_request"`
	Sender     hubUser `json:"sender"`
	Repository struct {
		HTMLURL  string `json:"html_url"`
		CloneURL string `json:"clone_url"`
		SSHURL   string `json:"ssh_url"`
	} `json:"repository"`
	IsPull bool `json:"is_pull"` // Gitea
	// Installation is the GitHub App installation a delivery of an App's is from.
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	// Label is the label GitHub's "labeled" action gave.
	Label *hubLabel `json:"label"`
	// CheckRun is GitHub's check_run event's run.
	CheckRun *struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		HeadSHA    string `json:"head_sha"`
		Conclusion string `json:"conclusion"`
		Output     struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
			Text    string `json:"text"`
		} `json:"output"`
	} `json:"check_run"`
	// A status event's (GitHub's and Gitea's): a commit's status by a context.
	ID          int64  `json:"id"`
	SHA         string `json:"sha"`
	State       string `json:"state"`
	Context     string `json:"context"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

type hubLabel struct {
	Name string `json:"name"`
}

// hubUser is a person (or a bot) in GitHub's and Gitea's deliveries.
type hubUser struct {
	ID      int64  `json:"id"`
	Login   string `json:"login"`
	HTMLURL string `json:"html_url"`
	Type    string `json:"type"`
}

// labPayload is the part of GitLab's deliveries the hub reads.
type labPayload struct {
	ObjectKind string `json:"object_kind"`
	User       struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
	Project struct {
		WebURL     string `json:"web_url"`
		GitHTTPURL string `json:"git_http_url"`
		GitSSHURL  string `json:"git_ssh_url"`
	} `json:"project"`
	ObjectAttributes struct {
		ID int64 `json:"id"`
		// A Pipeline Hook's pipeline: its commit and how it ended.
		SHA    string `json:"sha"`
		Status string `json:"status"`
		// An Issue Hook's issue.
		IID         int64  `json:"iid"`
		Title       string `json:"title"`
		Description string `json:"description"`

		Note         string `json:"note"`
		NoteableType string `json:"noteable_type"`
		Action       string `json:"action"`
		// Type is "DiffNote" for a note on a line of a merge request's diff, placed
		// by Position (the new side's, or the old's for a removed line).
		Type         string `json:"type"`
		DiscussionID string `json:"discussion_id"`
		Position     *struct {
			NewPath string `json:"new_path"`
			OldPath string `json:"old_path"`
			NewLine int64  `json:"new_line"`
			OldLine int64  `json:"old_line"`
		} `json:"position"`
	} `json:"object_attributes"`
	MergeRequest *struct {
		IID int64 `json:"iid"`
	} `json:"merge_request"`
	// Changes says what an Issue Hook's update changed: the labels before and after.
	Changes struct {
		Labels *struct {
			Previous []labLabel `json:"previous"`
			Current  []labLabel `json:"current"`
		} `json:"labels"`
	} `json:"changes"`
	Issue *struct {
		IID         int64  `json:"iid"`
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"issue"`
	// Builds are a Pipeline Hook's jobs.
	Builds []struct {
		Name   string `json:"name"`
		Stage  string `json:"stage"`
		Status string `json:"status"`
	} `json:"builds"`
}

type labLabel struct {
	Title string `json:"title"`
}

// parse reads a delivery of the forge kind (its event name as the forge's header said).
func parse(kind, name string, body []byte) (*event, error) {
	if kind == core.ForgeGitLab {
		var p labPayload
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, err
		}
		e := &event{Repositories: nonEmpty(p.Project.WebURL, p.Project.GitHTTPURL, p.Project.GitSSHURL), Login: p.User.Username, UserID: p.User.ID}
		if p.Issue != nil {
			e.Issue, e.Title, e.Body = p.Issue.IID, p.Issue.Title, p.Issue.Description
		}
		a := p.ObjectAttributes
		// A note's action is "create" or "update" (GitLab 16.x on); older ones send
		// no action, and only for new notes.
		created := p.ObjectKind == "note" && (a.Action == "" || a.Action == "create")
		e.NewIssueComment = created && a.NoteableType == "Issue" && p.Issue != nil
		e.CommentID, e.Comment, e.Kind = a.ID, a.Note, "comment"
		if l := p.Changes.Labels; p.ObjectKind == "issue" && l != nil {
			e.Issue, e.Title, e.Body = a.IID, a.Title, a.Description
			for _, c := range l.Current {
				if !slices.Contains(l.Previous, c) {
					e.Labeled = append(e.Labeled, c.Title)
				}
			}
		}
		if created && a.NoteableType == "MergeRequest" && p.MergeRequest != nil {
			e.Pull = p.MergeRequest.IID
			if a.Type == "DiffNote" && a.Position != nil {
				e.Review, e.Path, e.Line = true, cmp.Or(a.Position.NewPath, a.Position.OldPath), cmp.Or(a.Position.NewLine, a.Position.OldLine)
				e.Thread = a.DiscussionID
			}
		}
		if e.Login != "" {
			e.Profile = profile(p.Project.WebURL, e.Login)
		}
		if p.ObjectKind == "pipeline" && a.Status == "failed" {
			e.Check = labPipeline(&p)
		}
		return e, nil
	}
	var p hubPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, err
	}
	e := &event{Repositories: nonEmpty(p.Repository.HTMLURL, p.Repository.CloneURL, p.Repository.SSHURL)}
	if p.Installation != nil && kind == core.ForgeGitHub {
		e.Installation = p.Installation.ID
	}
	if p.Issue != nil {
		e.Issue, e.Title, e.Body = p.Issue.Number, p.Issue.Title, p.Issue.Body
	}
	if p.Comment != nil {
		e.CommentID, e.Comment, e.Kind = p.Comment.ID, p.Comment.Body, "comment"
		e.author(p.Comment.User)
	}
	isPull := p.IsPull || (p.Issue != nil && len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null")
	e.NewIssueComment = name == "issue_comment" && p.Action == "created" && p.Issue != nil && p.Comment != nil && !isPull
	switch {
	case name == "issues" && p.Action == "labeled" && p.Label != nil && p.Issue != nil && !isPull:
		e.Labeled = []string{p.Label.Name}
		e.author(p.Sender)
	case (name == "issues" || name == "issue_label") && p.Action == "label_updated" && p.Issue != nil && !isPull:
		// Gitea's: the issue's labels after the change, not which one it was.
		for _, l := range p.Issue.Labels {
			e.Labeled = append(e.Labeled, l.Name)
		}
		e.author(p.Sender)
	case (name == "issue_comment" || name == "pull_request_comment") && p.Action == "created" && p.Issue != nil && p.Comment != nil && isPull:
		e.Pull = p.Issue.Number
	case name == "pull_request_review_comment" && p.Action == "created" && p.Comment != nil && p.PullRequest != nil:
		// GitHub's line comment; Gitea's event of this name is a review, below.
		e.Pull, e.Review, e.Kind, e.Path = p.PullRequest.Number, true, "review-comment", p.Comment.Path
		e.Thread = strconv.FormatInt(cmp.Or(p.Comment.InReplyTo, p.Comment.ID), 10)
		if l := cmp.Or(p.Comment.Line, p.Comment.OriginalLine); l != nil {
			e.Line = *l
		}
	case p.Review != nil && p.PullRequest != nil && (name == "pull_request_review" && p.Action == "submitted" || p.Action == "reviewed"):
		// GitHub's submitted review, or Gitea's (pull_request_review_approved,
		// _rejected, _comment; older Gitea sends a comment review as
		// pull_request_comment): its author is GitHub's review's user, Gitea's sender.
		e.Pull, e.Review, e.Kind, e.CommentID = p.PullRequest.Number, true, "review", p.Review.ID
		e.Comment = cmp.Or(p.Review.Body, p.Review.Content)
		e.author(cmp.Or(p.Review.User, p.Sender))
		if e.CommentID == 0 {
			// Gitea's reviews come without their id: the delivery's body names the
			// review (a replay sends it again, the same).
			sum := sha256.Sum256(body)
			e.Kind += "-" + hex.EncodeToString(sum[:12])
		}
	}
	if e.Profile == "" && e.Login != "" {
		// GitHub's and Gitea's users carry html_url; where one is left out, a login's
		// page is at the root of the repository's forge (GitHub Enterprise's too).
		e.Profile = profile(p.Repository.HTMLURL, e.Login)
	}
	e.Check = hubCheck(name, &p)
	return e, nil
}

// hubCheck is GitHub's check run that completed failed or timed out, or GitHub's or
// Gitea's commit status of failure or error (nil: none).
func hubCheck(name string, p *hubPayload) *failedCheck {
	switch r := p.CheckRun; {
	case name == "check_run" && r != nil && p.Action == "completed" && (r.Conclusion == "failure" || r.Conclusion == "timed_out"):
		out := strings.TrimSpace(r.Output.Summary + "\n\n" + r.Output.Text)
		if out == "" {
			out = r.Output.Title
		}
		return &failedCheck{Name: r.Name, Key: "run:" + strconv.FormatInt(r.ID, 10), SHA: r.HeadSHA, Output: out}
	case name == "status" && (p.State == "failure" || p.State == "error") && p.SHA != "":
		out := p.Description
		if p.TargetURL != "" {
			out = strings.TrimSpace(out + "\n\nDetails: " + p.TargetURL)
		}
		return &failedCheck{Name: p.Context, Key: "status:" + strconv.FormatInt(p.ID, 10), SHA: p.SHA, Output: out}
	}
	return nil
}

// labPipeline is a GitLab pipeline that failed: its failed jobs are what it says.
func labPipeline(p *labPayload) *failedCheck {
	var failed []string
	for _, b := range p.Builds {
		if b.Status == "failed" {
			failed = append(failed, b.Name+" (stage "+b.Stage+")")
		}
	}
	out := ""
	if len(failed) > 0 {
		out = "the failed jobs: " + strings.Join(failed, ", ")
	}
	id := strconv.FormatInt(p.ObjectAttributes.ID, 10)
	return &failedCheck{Name: "pipeline #" + id, Key: "pipeline:" + id, SHA: p.ObjectAttributes.SHA, Output: out}
}

// author makes u the event's author.
func (e *event) author(u hubUser) {
	e.Login, e.UserID, e.Profile, e.Bot = u.Login, u.ID, u.HTMLURL, u.Type == "Bot"
}

// profile is a GitLab user's page on the GitLab of a project's web URL.
func profile(projectURL, login string) string {
	u, err := url.Parse(projectURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + "/" + url.PathEscape(login)
}

func nonEmpty(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
