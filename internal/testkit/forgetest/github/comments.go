package github

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

const (
	docListComments  = "https://docs.github.com/rest/issues/comments#list-issue-comments"
	docCreateComment = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
	docUpdateComment = "https://docs.github.com/rest/issues/comments#update-an-issue-comment"
)

// Comment is an issue (or pull request) comment as the fake holds it. The fake keeps
// no issues: a comment may be made on any number.
type Comment struct {
	ID     int64
	Issue  int
	Body   string
	Author string
	// Edits counts the times it was changed after it was made.
	Edits int
}

// Comments lists the comments on issue number of owner/name, oldest first.
func (s *Server) Comments(owner, name string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	if repo := s.repositories[owner+"/"+name]; repo != nil {
		for _, c := range repo.comments {
			if c.Issue == number {
				out = append(out, *c)
			}
		}
	}
	return out
}

// AddComment writes a comment by login on issue number of owner/name, as that person
// would on GitHub, and returns its id.
func (s *Server) AddComment(owner, name string, number int, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := s.repositories[owner+"/"+name]
	s.nextID++
	repo.comments = append(repo.comments, &Comment{ID: s.nextID, Issue: number, Body: body, Author: login})
	return s.nextID
}

// listComments lists an issue's comments oldest first, a page at a time (per_page at
// most 100, 30 unless asked), with the Link header GitHub gives a list of more pages.
func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, _, ok := s.authorize(w, r, Read, docListComments)
	if !ok {
		return
	}
	number, _ := strconv.Atoi(r.PathValue("number"))
	var all []*Comment
	for _, c := range repo.comments {
		if c.Issue == number {
			all = append(all, c)
		}
	}
	size, page := queryInt(r, "per_page", 30), queryInt(r, "page", 1)
	size = min(max(size, 1), 100)
	last := max(1, (len(all)+size-1)/size)
	if last > 1 {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(last))
		u.RawQuery = q.Encode()
		w.Header().Set("Link", "<"+s.URL+u.String()+`>; rel="last"`)
	}
	out := []map[string]any{}
	for i := (page - 1) * size; i >= 0 && i < min(page*size, len(all)); i++ {
		out = append(out, s.commentJSON(repo, all[i]))
	}
	reply(w, http.StatusOK, out)
}

// queryInt is the query's number name, or def.
func queryInt(r *http.Request, name string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, tk, ok := s.authorize(w, r, Write, docCreateComment)
	if !ok {
		return
	}
	number, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || number < 1 {
		refuse(w, http.StatusNotFound, "Not Found", docCreateComment)
		return
	}
	body, ok := commentBody(w, r, docCreateComment)
	if !ok {
		return
	}
	s.nextID++
	c := &Comment{ID: s.nextID, Issue: number, Body: body, Author: tk.login}
	repo.comments = append(repo.comments, c)
	reply(w, http.StatusCreated, s.commentJSON(repo, c))
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, _, ok := s.authorize(w, r, Write, docUpdateComment)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, c := range repo.comments {
		if c.ID == id {
			body, ok := commentBody(w, r, docUpdateComment)
			if !ok {
				return
			}
			c.Body = body
			c.Edits++
			reply(w, http.StatusOK, s.commentJSON(repo, c))
			return
		}
	}
	refuse(w, http.StatusNotFound, "Not Found", docUpdateComment)
}

// commentBody reads a comment's body, which GitHub requires.
func commentBody(w http.ResponseWriter, r *http.Request, doc string) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		refuse(w, http.StatusBadRequest, "Problems parsing JSON", doc)
		return "", false
	}
	if in.Body == nil || *in.Body == "" {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", doc,
			fieldError{Resource: "IssueComment", Field: "body", Code: "missing_field"})
		return "", false
	}
	return *in.Body, true
}

// commentJSON is a comment as GitHub renders it. Called with s.mu held.
func (s *Server) commentJSON(repo *repository, c *Comment) map[string]any {
	now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	return map[string]any{
		"id": c.ID, "body": c.Body, "created_at": now, "updated_at": now,
		"html_url":  s.URL + "/" + repo.path() + "/issues/" + strconv.Itoa(c.Issue) + "#issuecomment-" + strconv.FormatInt(c.ID, 10),
		"issue_url": s.URL + "/api/v3/repos/" + repo.path() + "/issues/" + strconv.Itoa(c.Issue),
		"user":      map[string]any{"login": c.Author},
	}
}

// SetPermission makes login a collaborator of owner/name with permission ("read",
// "write", "admin"), as GitHub's collaborator permission route reports it; a login
// never set is not found there.
func (s *Server) SetPermission(owner, name, login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := s.repositories[owner+"/"+name]
	if repo.permissions == nil {
		repo.permissions = map[string]string{}
	}
	repo.permissions[login] = permission
}

func (s *Server) permission(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	const doc = "https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user"
	repo, _, ok := s.authorize(w, r, Read, doc)
	if !ok {
		return
	}
	login := r.PathValue("username")
	perm, known := repo.permissions[login]
	if !known {
		refuse(w, http.StatusNotFound, "Not Found", doc)
		return
	}
	reply(w, http.StatusOK, map[string]any{"permission": perm, "role_name": perm, "user": map[string]any{"login": login}})
}
