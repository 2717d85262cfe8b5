package forge

import (
	"encoding/json"
	"net/url"
	"strconv"

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
	// Login, UserID and Profile are the comment's author on the forge; Bot says the
	// forge marks them a bot (GitHub's apps).
	Login   string
	UserID  int64
	Profile string
	Bot     bool
}

func (e *event) threadKey() string {
	key := ""
	if len(e.Repositories) > 0 {
		key = core.RepositoryKey(e.Repositories[0])
	}
	if e.Issue != 0 {
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
	} `json:"issue"`
	Comment *struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
		User struct {
			ID      int64  `json:"id"`
			Login   string `json:"login"`
			HTMLURL string `json:"html_url"`
			Type    string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
	Repository struct {
		HTMLURL  string `json:"html_url"`
		CloneURL string `json:"clone_url"`
		SSHURL   string `json:"ssh_url"`
	} `json:"repository"`
	IsPull bool `json:"is_pull"` // Gitea
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
		ID           int64  `json:"id"`
		Note         string `json:"note"`
		NoteableType string `json:"noteable_type"`
		Action       string `json:"action"`
	} `json:"object_attributes"`
	Issue *struct {
		IID         int64  `json:"iid"`
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"issue"`
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
		e.NewIssueComment = p.ObjectKind == "note" && a.NoteableType == "Issue" && p.Issue != nil && (a.Action == "" || a.Action == "create")
		e.CommentID, e.Comment = a.ID, a.Note
		if e.Login != "" {
			e.Profile = profile(p.Project.WebURL, e.Login)
		}
		return e, nil
	}
	var p hubPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, err
	}
	e := &event{Repositories: nonEmpty(p.Repository.HTMLURL, p.Repository.CloneURL, p.Repository.SSHURL)}
	if p.Issue != nil {
		e.Issue, e.Title, e.Body = p.Issue.Number, p.Issue.Title, p.Issue.Body
	}
	if p.Comment != nil {
		u := p.Comment.User
		e.CommentID, e.Comment, e.Login, e.UserID, e.Profile, e.Bot = p.Comment.ID, p.Comment.Body, u.Login, u.ID, u.HTMLURL, u.Type == "Bot"
	}
	isPull := p.IsPull || (p.Issue != nil && len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null")
	e.NewIssueComment = name == "issue_comment" && p.Action == "created" && p.Issue != nil && p.Comment != nil && !isPull
	return e, nil
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
