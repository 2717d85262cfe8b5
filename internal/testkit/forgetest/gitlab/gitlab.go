// Package gitlab runs a fake GitLab on loopback for tests: the merge request routes of
// GitLab's REST API v4 the hub calls, under /api/v4/ (so client-go's
// WithBaseURL(URL+"/api/v4") reaches it), and the projects themselves over git's smart
// HTTP protocol at /group/sub/name.git.
//
// It answers as GitLab does, status and body: merge requests created (a draft is a
// title starting "Draft:", and draft is true in what comes back), listed by
// source_branch and state, read and edited, with iid, web_url and state opened,
// closed, locked or merged; a project named by its numeric id or its URL-encoded path
// ("group%2Fsub%2Fname"); PRIVATE-TOKEN or Bearer authentication. Refusals are
// GitLab's words: 401 {"message":"401 Unauthorized"}, 403 {"message":"403
// Forbidden"}, 404 {"message":"404 Project Not Found"}, 409 with the message as an
// array for a second open merge request from a branch, 422 (also an array) for a
// source that is the target or a branch that does not exist.
//
// Every project is private: a token sees only the projects it was granted, Read as a
// Reporter, Write as a Developer. A route the fake does not know is answered 404 and
// recorded; the test fails at its end if there was one.
//
// What it does not do: forks, merging (Merge only marks a merge request merged),
// approvals, pipelines, pagination beyond per_page and page.
package gitlab

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/forgetest"
)

// Permission is a token's role in a project.
type Permission int

const (
	// Read is a Reporter's: list and read merge requests, fetch.
	Read Permission = iota + 1
	// Write is a Developer's: also open and edit merge requests, push.
	Write
)

// Server is a running fake GitLab, stopped at the test's end.
type Server struct {
	// URL is scheme://host:port: the API is at URL+"/api/v4", projects at
	// URL+"/group/name.git".
	URL string

	srv   *httptest.Server
	repos *forgetest.Repos

	mu         sync.Mutex
	projects   map[string]*project // by path
	tokens     map[string]map[string]Permission
	nextID     int64
	requests   []string
	unexpected []string
}

type project struct {
	id       int64
	path     string
	archived bool
	mrs      []*MergeRequest
	notes    []*Note
	members  map[int64]member // by user id (AddMember)
}

// MergeRequest is a merge request as the fake holds it.
type MergeRequest struct {
	ID  int64
	IID int64
	// Title is as given, "Draft: " included.
	Title       string
	Description string
	// SourceBranch and TargetBranch are branches of the project.
	SourceBranch, TargetBranch string
	SHA                        string
	// State is "opened", "closed", "locked" or "merged".
	State                                    string
	CreatedAt, UpdatedAt, MergedAt, ClosedAt time.Time
}

// Draft is what GitLab makes of the title: a draft when it starts "Draft:", "[Draft]"
// or "(Draft)", in any case.
func (m MergeRequest) Draft() bool { return draftTitle.MatchString(m.Title) }

var draftTitle = regexp.MustCompile(`(?i)^\s*(\[draft\]|\(draft\)|draft:|draft\s-\s)`)

// Start starts a fake GitLab with no projects or tokens.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		repos:    forgetest.NewRepos(t),
		projects: map[string]*project{},
		tokens:   map[string]map[string]Permission{},
		nextID:   100,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v4/projects/{id}/merge_requests", s.listMRs)
	mux.HandleFunc("POST /api/v4/projects/{id}/merge_requests", s.createMR)
	mux.HandleFunc("GET /api/v4/projects/{id}/merge_requests/{iid}", s.getMR)
	mux.HandleFunc("PUT /api/v4/projects/{id}/merge_requests/{iid}", s.updateMR)
	mux.HandleFunc("POST /api/v4/projects/{id}/issues/{iid}/notes", s.createNote(issueNotes))
	mux.HandleFunc("GET /api/v4/projects/{id}/issues/{iid}/notes", s.listIssueNotes)
	mux.HandleFunc("PUT /api/v4/projects/{id}/issues/{iid}/notes/{note}", s.updateNote(issueNotes))
	mux.HandleFunc("POST /api/v4/projects/{id}/merge_requests/{iid}/notes", s.createNote(mergeRequestNotes))
	mux.HandleFunc("PUT /api/v4/projects/{id}/merge_requests/{iid}/notes/{note}", s.updateNote(mergeRequestNotes))
	mux.HandleFunc("POST /api/v4/projects/{id}/merge_requests/{iid}/discussions/{discussion}/notes", s.addDiscussionNote)
	mux.HandleFunc("GET /api/v4/projects/{id}/members/all/{user}", s.getMember)
	mux.HandleFunc("/", s.gitOrUnknown)
	// The URL is known before the first request is served: handlers render it.
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	s.URL = "http://" + s.srv.Listener.Addr().String()
	s.srv.Start()
	t.Cleanup(func() {
		s.srv.Close()
		if u := s.Unexpected(); len(u) > 0 {
			t.Errorf("the fake GitLab was asked for routes it does not serve: %q", u)
		}
	})
	return s
}

// NewRepo creates the private project at path ("group/name", "group/sub/name") with
// main holding one commit, and returns its clone URL.
func (s *Server) NewRepo(t testing.TB, path string) string {
	t.Helper()
	s.repos.Create(t, path)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.projects[path] = &project{id: s.nextID, path: path}
	return s.URL + "/" + path + ".git"
}

// ProjectID is the numeric id of the project at path.
func (s *Server) ProjectID(path string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.projects[path].id
}

// PushBranch adds branch to the project at path, one commit ahead of main.
func (s *Server) PushBranch(t testing.TB, path, branch string) {
	t.Helper()
	s.repos.Branch(t, path, branch)
}

// Protect refuses pushes to branch with GitLab's words.
func (s *Server) Protect(t testing.TB, path, branch string) {
	t.Helper()
	s.repos.Protect(t, path, branch, "GitLab: You are not allowed to push code to protected branches on this project.")
}

// BareRepo is the directory of the project's bare repository.
func (s *Server) BareRepo(path string) string { return s.repos.Dir(path) }

// Grant gives a token p in the project at path (a personal, project or group access
// token: GitLab treats them alike here). A token granted nothing is unknown (401).
func (s *Server) Grant(tok, path string, p Permission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens[tok] == nil {
		s.tokens[tok] = map[string]Permission{}
	}
	s.tokens[tok][path] = p
}

// Archive makes the project read-only, as archiving it does.
func (s *Server) Archive(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projects[path].archived = true
}

// MergeRequests are the project's merge requests, oldest first.
func (s *Server) MergeRequests(path string) []MergeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []MergeRequest
	if p := s.projects[path]; p != nil {
		for _, m := range p.mrs {
			out = append(out, *m)
		}
	}
	return out
}

// MergeRequest is one of the project's merge requests, by iid.
func (s *Server) MergeRequest(path string, iid int64) (MergeRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.mr(s.projects[path], iid); m != nil {
		return *m, true
	}
	return MergeRequest{}, false
}

func (s *Server) mr(p *project, iid int64) *MergeRequest {
	if p == nil {
		return nil
	}
	for _, m := range p.mrs {
		if m.IID == iid {
			return m
		}
	}
	return nil
}

// Merge marks a merge request merged, as merging it in GitLab does.
func (s *Server) Merge(path string, iid int64) { s.setState(path, iid, "merged") }

// Close closes a merge request without merging it.
func (s *Server) Close(path string, iid int64) { s.setState(path, iid, "closed") }

// Lock marks a merge request locked, the state GitLab shows while it merges.
func (s *Server) Lock(path string, iid int64) { s.setState(path, iid, "locked") }

func (s *Server) setState(path string, iid int64, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mr(s.projects[path], iid)
	if m == nil {
		panic(fmt.Sprintf("fake GitLab: no merge request !%d in %s", iid, path))
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	m.State, m.UpdatedAt = state, now
	switch state {
	case "merged":
		m.MergedAt = now
	case "closed":
		m.ClosedAt = now
	}
}

// Requests are the requests the fake was sent ("METHOD /path?query"), in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Unexpected are the requests for routes the fake does not serve.
func (s *Server) Unexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unexpected)
}

// TakeUnexpected returns the requests for routes the fake does not serve and forgets
// them: a test that asks for one on purpose takes it, so its end does not fail.
func (s *Server) TakeUnexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.unexpected
	s.unexpected = nil
	return u
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", fmt.Sprintf("FAKE%d", time.Now().UnixNano()))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// refuse writes GitLab's error body: {"message": message}, where message is a string
// ("403 Forbidden") or, for a model's validation, an array of sentences.
func refuse(w http.ResponseWriter, status int, message any) {
	reply(w, status, map[string]any{"message": message})
}

// token is the request's token: the PRIVATE-TOKEN header or a Bearer one.
func token(r *http.Request) string {
	if t := r.Header.Get("PRIVATE-TOKEN"); t != "" {
		return t
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// authorize finds the project the route names and checks the request's token for
// need, answering GitLab's refusal when it fails. Called with s.mu held.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, need Permission) (*project, bool) {
	raw := token(r)
	grants, known := s.tokens[raw]
	switch {
	case raw != "" && !known:
		refuse(w, http.StatusUnauthorized, "401 Unauthorized")
		return nil, false
	case raw == "" && need == Write:
		// Writes authenticate first (authenticate_non_get!).
		refuse(w, http.StatusUnauthorized, "401 Unauthorized")
		return nil, false
	}
	// {id} is the numeric id or the URL-encoded path; the mux hands it decoded.
	id := r.PathValue("id")
	p := s.projects[id]
	if p == nil {
		for _, q := range s.projects {
			if strconv.FormatInt(q.id, 10) == id {
				p = q
			}
		}
	}
	if p == nil || grants[p.path] == 0 {
		// A private project the token cannot see does not exist, as far as it knows.
		refuse(w, http.StatusNotFound, "404 Project Not Found")
		return nil, false
	}
	if grants[p.path] < need || need == Write && p.archived {
		refuse(w, http.StatusForbidden, "403 Forbidden")
		return nil, false
	}
	return p, true
}

func (s *Server) listMRs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Read)
	if !ok {
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case "":
		state = "all"
	case "opened", "closed", "locked", "merged", "all":
	default:
		reply(w, http.StatusBadRequest, map[string]string{"error": "state does not have a valid value"})
		return
	}
	orderBy, sortDir := q.Get("order_by"), q.Get("sort")
	if orderBy != "" && orderBy != "created_at" && orderBy != "updated_at" {
		reply(w, http.StatusBadRequest, map[string]string{"error": "order_by does not have a valid value"})
		return
	}
	source, target := q.Get("source_branch"), q.Get("target_branch")
	var out []*MergeRequest
	for _, m := range p.mrs {
		if state != "all" && m.State != state || source != "" && m.SourceBranch != source || target != "" && m.TargetBranch != target {
			continue
		}
		out = append(out, m)
	}
	slices.SortStableFunc(out, func(a, b *MergeRequest) int {
		x, y := a.CreatedAt, b.CreatedAt
		if orderBy == "updated_at" {
			x, y = a.UpdatedAt, b.UpdatedAt
		}
		if c := x.Compare(y); c != 0 {
			return c
		}
		return int(a.IID - b.IID)
	})
	if sortDir != "asc" {
		slices.Reverse(out)
	}
	perPage, page := 20, 1
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 {
		perPage = min(n, 100)
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}
	from := min((page-1)*perPage, len(out))
	to := min(from+perPage, len(out))
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(perPage))
	h.Set("X-Total", strconv.Itoa(len(out)))
	h.Set("X-Total-Pages", strconv.Itoa(max(1, (len(out)+perPage-1)/perPage)))
	h.Set("X-Next-Page", "")
	if to < len(out) {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
	}
	list := []map[string]any{}
	for _, m := range out[from:to] {
		list = append(list, s.mrJSON(p, m))
	}
	reply(w, http.StatusOK, list)
}

// mrInput is a create's or an update's fields, as JSON or a form.
type mrInput struct {
	Title        *string `json:"title"`
	Description  *string `json:"description"`
	SourceBranch string  `json:"source_branch"`
	TargetBranch *string `json:"target_branch"`
	StateEvent   string  `json:"state_event"`
}

func readInput(r *http.Request) (mrInput, error) {
	var in mrInput
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		err := json.NewDecoder(r.Body).Decode(&in)
		return in, err
	}
	if err := r.ParseForm(); err != nil {
		return in, err
	}
	opt := func(k string) *string {
		if _, ok := r.PostForm[k]; ok {
			v := r.PostForm.Get(k)
			return &v
		}
		return nil
	}
	in.Title, in.Description, in.TargetBranch = opt("title"), opt("description"), opt("target_branch")
	in.SourceBranch, in.StateEvent = r.PostForm.Get("source_branch"), r.PostForm.Get("state_event")
	return in, nil
}

func (s *Server) createMR(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Write)
	if !ok {
		return
	}
	in, err := readInput(r)
	if err != nil {
		reply(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	switch {
	case in.SourceBranch == "":
		reply(w, http.StatusBadRequest, map[string]string{"error": "source_branch is missing"})
		return
	case in.TargetBranch == nil || *in.TargetBranch == "":
		reply(w, http.StatusBadRequest, map[string]string{"error": "target_branch is missing"})
		return
	case in.Title == nil || strings.TrimSpace(*in.Title) == "":
		reply(w, http.StatusBadRequest, map[string]string{"error": "title is missing"})
		return
	}
	target := *in.TargetBranch
	// GitLab's order: the branches' own checks (422), then one open merge request
	// per source branch (409), both with the message as an array.
	if in.SourceBranch == target {
		refuse(w, http.StatusUnprocessableEntity, []string{"You can't use same project/branch for source and target"})
		return
	}
	sha := s.repos.Head(p.path, in.SourceBranch)
	if sha == "" {
		refuse(w, http.StatusUnprocessableEntity, []string{fmt.Sprintf("Source branch \"%s\" does not exist", in.SourceBranch)})
		return
	}
	if s.repos.Head(p.path, target) == "" {
		refuse(w, http.StatusUnprocessableEntity, []string{fmt.Sprintf("Target branch \"%s\" does not exist", target)})
		return
	}
	for _, m := range p.mrs {
		if m.State == "opened" && m.SourceBranch == in.SourceBranch && m.TargetBranch == target {
			refuse(w, http.StatusConflict, []string{fmt.Sprintf("Another open merge request already exists for this source branch: !%d", m.IID)})
			return
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	s.nextID++
	m := &MergeRequest{ID: s.nextID, IID: int64(len(p.mrs) + 1), Title: *in.Title, SourceBranch: in.SourceBranch,
		TargetBranch: target, SHA: sha, State: "opened", CreatedAt: now, UpdatedAt: now}
	if in.Description != nil {
		m.Description = *in.Description
	}
	p.mrs = append(p.mrs, m)
	reply(w, http.StatusCreated, s.mrJSON(p, m))
}

// numbered finds the merge request a route names, answering 404 when there is none.
func (s *Server) numbered(w http.ResponseWriter, r *http.Request, p *project) *MergeRequest {
	iid, err := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	m := s.mr(p, iid)
	if err != nil || m == nil {
		refuse(w, http.StatusNotFound, "404 Not found")
		return nil
	}
	return m
}

func (s *Server) getMR(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Read)
	if !ok {
		return
	}
	if m := s.numbered(w, r, p); m != nil {
		reply(w, http.StatusOK, s.mrJSON(p, m))
	}
}

func (s *Server) updateMR(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Write)
	if !ok {
		return
	}
	m := s.numbered(w, r, p)
	if m == nil {
		return
	}
	in, err := readInput(r)
	if err != nil {
		reply(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	if in.Title == nil && in.Description == nil && in.TargetBranch == nil && in.StateEvent == "" {
		reply(w, http.StatusBadRequest, map[string]string{"error": "title, description, target_branch, state_event are missing, at least one parameter must be provided"})
		return
	}
	if in.TargetBranch != nil && *in.TargetBranch != m.TargetBranch {
		// Retargeting is a thing the hub never does.
		refuse(w, http.StatusUnprocessableEntity, []string{"Target branch can't be changed by the fake"})
		return
	}
	if in.Title != nil {
		if strings.TrimSpace(*in.Title) == "" {
			refuse(w, http.StatusBadRequest, map[string][]string{"title": {"can't be blank"}})
			return
		}
		m.Title = *in.Title
	}
	if in.Description != nil {
		m.Description = *in.Description
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	switch in.StateEvent {
	case "":
	case "close":
		if m.State == "opened" {
			m.State, m.ClosedAt = "closed", now
		}
	case "reopen":
		if m.State == "closed" {
			m.State, m.ClosedAt = "opened", time.Time{}
		}
	default:
		reply(w, http.StatusBadRequest, map[string]string{"error": "state_event does not have a valid value"})
		return
	}
	m.UpdatedAt = now
	reply(w, http.StatusOK, s.mrJSON(p, m))
}

// mrJSON is a merge request as GitLab renders it. Called with s.mu held.
func (s *Server) mrJSON(p *project, m *MergeRequest) map[string]any {
	if sha := s.repos.Head(p.path, m.SourceBranch); sha != "" && m.State == "opened" {
		m.SHA = sha
	}
	ref := fmt.Sprintf("!%d", m.IID)
	author := map[string]any{"id": 1, "username": "wshub", "name": "wshub", "state": "active",
		"web_url": s.URL + "/wshub"}
	draft := m.Draft()
	status := "mergeable"
	if draft {
		status = "draft_status"
	}
	if m.State != "opened" {
		status = "not_open"
	}
	out := map[string]any{
		"id":                            m.ID,
		"iid":                           m.IID,
		"project_id":                    p.id,
		"title":                         m.Title,
		"description":                   m.Description,
		"state":                         m.State,
		"created_at":                    stamp(m.CreatedAt),
		"updated_at":                    stamp(m.UpdatedAt),
		"merged_by":                     nil,
		"merge_user":                    nil,
		"merged_at":                     nullStamp(m.MergedAt),
		"closed_by":                     nil,
		"closed_at":                     nullStamp(m.ClosedAt),
		"target_branch":                 m.TargetBranch,
		"source_branch":                 m.SourceBranch,
		"user_notes_count":              0,
		"upvotes":                       0,
		"downvotes":                     0,
		"author":                        author,
		"assignees":                     []any{},
		"assignee":                      nil,
		"reviewers":                     []any{},
		"source_project_id":             p.id,
		"target_project_id":             p.id,
		"labels":                        []any{},
		"draft":                         draft,
		"work_in_progress":              draft,
		"milestone":                     nil,
		"merge_when_pipeline_succeeds":  false,
		"merge_status":                  "can_be_merged",
		"detailed_merge_status":         status,
		"sha":                           m.SHA,
		"merge_commit_sha":              nil,
		"squash_commit_sha":             nil,
		"discussion_locked":             nil,
		"should_remove_source_branch":   nil,
		"force_remove_source_branch":    false,
		"reference":                     ref,
		"references":                    map[string]string{"short": ref, "relative": ref, "full": p.path + ref},
		"web_url":                       fmt.Sprintf("%s/%s/-/merge_requests/%d", s.URL, p.path, m.IID),
		"time_stats":                    map[string]any{"time_estimate": 0, "total_time_spent": 0},
		"squash":                        false,
		"task_completion_status":        map[string]int{"count": 0, "completed_count": 0},
		"has_conflicts":                 false,
		"blocking_discussions_resolved": true,
	}
	if m.State == "merged" {
		out["merged_by"] = author
		out["merge_user"] = author
		out["merge_commit_sha"] = fmt.Sprintf("%040x", m.ID)
	}
	return out
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func nullStamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}

// gitOrUnknown serves git's smart HTTP protocol at /group/name.git, and answers any
// other route 404, recording it.
func (s *Server) gitOrUnknown(w http.ResponseWriter, r *http.Request) {
	path, push, ok := forgetest.GitRequest(r)
	if !ok {
		s.mu.Lock()
		s.unexpected = append(s.unexpected, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		refuse(w, http.StatusNotFound, "404 Not Found")
		return
	}
	// The user name is anything ("oauth2" for an OAuth token); the password is the
	// token.
	challenge := func() {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitLab"`)
		http.Error(w, "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're required to use a token instead of a password.", http.StatusUnauthorized)
	}
	_, password, hasAuth := r.BasicAuth()
	if !hasAuth {
		challenge()
		return
	}
	s.mu.Lock()
	grants, known := s.tokens[password]
	p := s.projects[path]
	archived := p != nil && p.archived
	s.mu.Unlock()
	switch {
	case !known:
		challenge()
	case p == nil || grants[path] == 0:
		http.Error(w, "The project you were looking for could not be found or you don't have permission to view it.", http.StatusNotFound)
	case push && (grants[path] < Write || archived):
		http.Error(w, "You are not allowed to push code to this project.", http.StatusForbidden)
	default:
		s.repos.ServeGit(w, r)
	}
}
