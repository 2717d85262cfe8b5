// Package github runs a fake GitHub on loopback for tests: the REST routes the hub
// calls, under GitHub Enterprise Server's prefix /api/v3/ (so go-github's
// WithEnterpriseURLs(URL, URL) and ghinstallation's BaseURL URL+"/api/v3" reach it),
// and the repositories themselves over git's smart HTTP protocol at /owner/name.git.
//
// It answers as GitHub does, status and body: pull requests created, listed (the
// head=owner:branch, state and sort filters), read and edited; installation tokens
// minted for a GitHub App whose JWT verifies against the public key the test
// registered, and the installation of such an App on a repository found; and the refusals GitHub gives, word for word: 401 "Bad credentials",
// 403 "Resource not accessible by integration", 403 "Repository was archived so is
// read-only.", 404 "Not Found", and 422 "Validation Failed" with its errors (a pull
// request already exists, no commits between, a head or base that is not a branch).
//
// Every repository is private: a token sees only the repositories it was granted
// (Grant, or an App installation's), and an unknown or expired token is 401 "Bad
// credentials". Without a token a read is 404 (GitHub does not say a private
// repository exists) and a write 401 "Requires authentication". A route the fake
// does not know is answered 404 and recorded; the test fails at its end if there was
// one, so an adapter that calls more of GitHub than the hub means to is caught.
//
// What it does not do: forks and cross-repository pulls, merging (Merge only marks a
// pull merged, as a person would on github.com), reviews, checks, pagination beyond
// per_page and page, conditional requests, rate limits.
package github

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/forgetest"
)

// Permission is what a token may do with a repository.
type Permission int

const (
	// Read lists and reads pull requests and fetches (pull_requests: read, contents: read).
	Read Permission = iota + 1
	// Write also opens and edits pull requests and pushes (pull_requests: write,
	// contents: write).
	Write
)

// TokenLifetime is how long an installation token lives, as on GitHub.
const TokenLifetime = time.Hour

// Server is a running fake GitHub, stopped at the test's end.
type Server struct {
	// URL is scheme://host:port, the GitHub Enterprise base: the API is at
	// URL+"/api/v3/", repositories at URL+"/owner/name.git".
	URL string

	srv   *httptest.Server
	repos *forgetest.Repos

	mu            sync.Mutex
	repositories  map[string]*repository // by "owner/name"
	tokens        map[string]*token
	apps          map[int64]*rsa.PublicKey
	installations map[int64]*installation
	minted        map[int64]int // tokens minted, by installation
	lifetime      time.Duration
	nextID        int64
	requests      []string
	unexpected    []string
}

type repository struct {
	id          int64
	owner, name string
	archived    bool
	pulls       []*Pull
	comments    []*Comment
	// reviewComments are comments on lines of its pull requests' diffs.
	reviewComments []*ReviewComment
	permissions    map[string]string // by login (SetPermission)
}

func (r *repository) path() string { return r.owner + "/" + r.name }

// token is a personal access token (Grant) or an installation token (minted).
type token struct {
	login       string
	integration bool // an installation token: refusals name the "integration"
	grants      map[string]Permission
	expires     time.Time // zero: never
}

type installation struct {
	appID  int64
	perm   Permission
	repos  []string
	tokens []string
}

// Pull is a pull request as the fake holds it.
type Pull struct {
	ID     int64
	Number int
	Title  string
	Body   string
	// Head and Base are branch names of the repository.
	Head, Base string
	// HeadSHA is the head's commit when it was last read.
	HeadSHA string
	Draft   bool
	// State is "open" or "closed"; Merged says a closed pull was merged.
	State  string
	Merged bool
	// Author is the login of the token that opened it.
	Author                                   string
	CreatedAt, UpdatedAt, ClosedAt, MergedAt time.Time
}

// Start starts a fake GitHub with no repositories, tokens or apps.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		repos:         forgetest.NewRepos(t),
		repositories:  map[string]*repository{},
		tokens:        map[string]*token{},
		apps:          map[int64]*rsa.PublicKey{},
		installations: map[int64]*installation{},
		minted:        map[int64]int{},
		lifetime:      TokenLifetime,
		nextID:        1000,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/pulls", s.listPulls)
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/pulls", s.createPull)
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/pulls/{number}", s.getPull)
	mux.HandleFunc("PATCH /api/v3/repos/{owner}/{repo}/pulls/{number}", s.updatePull)
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/issues/{number}/comments", s.createComment)
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/issues/{number}/comments", s.listComments)
	mux.HandleFunc("PATCH /api/v3/repos/{owner}/{repo}/issues/comments/{id}", s.editComment)
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/pulls/{number}/comments", s.createReviewComment)
	mux.HandleFunc("POST /api/v3/repos/{owner}/{repo}/pulls/{number}/comments/{id}/replies", s.replyToReviewComment)
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/collaborators/{username}/permission", s.permission)
	mux.HandleFunc("POST /api/v3/app/installations/{id}/access_tokens", s.accessToken)
	mux.HandleFunc("GET /api/v3/repos/{owner}/{repo}/installation", s.repoInstallation)
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
			t.Errorf("the fake GitHub was asked for routes it does not serve: %q", u)
		}
	})
	return s
}

// NewRepo creates the private repository owner/name with main holding one commit, and
// returns its clone URL.
func (s *Server) NewRepo(t testing.TB, owner, name string) string {
	t.Helper()
	s.repos.Create(t, owner+"/"+name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.repositories[owner+"/"+name] = &repository{id: s.nextID, owner: owner, name: name}
	return s.URL + "/" + owner + "/" + name + ".git"
}

// PushBranch adds branch to owner/name, one commit ahead of main, as a push would.
func (s *Server) PushBranch(t testing.TB, owner, name, branch string) {
	t.Helper()
	s.repos.Branch(t, owner+"/"+name, branch)
}

// Protect refuses pushes to branch of owner/name with GitHub's words.
func (s *Server) Protect(t testing.TB, owner, name, branch string) {
	t.Helper()
	s.repos.Protect(t, owner+"/"+name, branch, "error: GH006: Protected branch update failed for refs/heads/"+branch+".")
}

// BareRepo is the directory of owner/name's bare repository.
func (s *Server) BareRepo(owner, name string) string { return s.repos.Dir(owner + "/" + name) }

// Grant lets a personal access token reach owner/name with p. A token granted
// nothing is unknown to GitHub (401).
func (s *Server) Grant(tok, owner, name string, p Permission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tk := s.tokens[tok]
	if tk == nil {
		tk = &token{login: "octocat", grants: map[string]Permission{}}
		s.tokens[tok] = tk
	}
	tk.grants[owner+"/"+name] = p
}

// Archive makes owner/name read-only, as archiving it on GitHub does.
func (s *Server) Archive(owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repositories[owner+"/"+name].archived = true
}

// RegisterApp registers a GitHub App by its id and the public half of its key.
func (s *Server) RegisterApp(appID int64, key *rsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps[appID] = key
}

// NewApp registers a GitHub App with a fresh RSA key and returns the private key as
// GitHub hands it out (PEM, PKCS#1).
func (s *Server) NewApp(t testing.TB, appID int64) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("fake GitHub: %v", err)
	}
	s.RegisterApp(appID, &key.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// Install installs app appID as installationID on the repositories ("owner/name")
// with p: the tokens it mints reach those and no others.
func (s *Server) Install(appID, installationID int64, p Permission, repos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installations[installationID] = &installation{appID: appID, perm: p, repos: slices.Clone(repos)}
}

// SetTokenLifetime changes how long the installation tokens minted from now on live
// (a token within a minute of its end is one ghinstallation mints anew).
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lifetime = d
}

// TokensMinted is how many tokens installationID was given.
func (s *Server) TokensMinted(installationID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.minted[installationID]
}

// InstallationTokens are the tokens installationID was given, oldest first.
func (s *Server) InstallationTokens(installationID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.installations[installationID]; in != nil {
		return slices.Clone(in.tokens)
	}
	return nil
}

// Pulls are owner/name's pull requests, oldest first.
func (s *Server) Pulls(owner, name string) []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pull
	if r := s.repositories[owner+"/"+name]; r != nil {
		for _, p := range r.pulls {
			out = append(out, *p)
		}
	}
	return out
}

// Pull is one of owner/name's pull requests.
func (s *Server) Pull(owner, name string, number int) (Pull, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pull(owner+"/"+name, number); p != nil {
		return *p, true
	}
	return Pull{}, false
}

func (s *Server) pull(repo string, number int) *Pull {
	r := s.repositories[repo]
	if r == nil {
		return nil
	}
	for _, p := range r.pulls {
		if p.Number == number {
			return p
		}
	}
	return nil
}

// Merge marks a pull request merged (and so closed), as merging it on GitHub does.
func (s *Server) Merge(owner, name string, number int) {
	s.setClosed(owner+"/"+name, number, true)
}

// Close closes a pull request without merging it.
func (s *Server) Close(owner, name string, number int) {
	s.setClosed(owner+"/"+name, number, false)
}

func (s *Server) setClosed(repo string, number int, merged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repo, number)
	if p == nil {
		panic(fmt.Sprintf("fake GitHub: no pull request #%d in %s", number, repo))
	}
	now := time.Now().UTC().Truncate(time.Second)
	p.State, p.ClosedAt, p.UpdatedAt = "closed", now, now
	if merged {
		p.Merged, p.MergedAt = true, now
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

// The documentation URLs GitHub puts in its error bodies.
const (
	docRoot       = "https://docs.github.com/rest"
	docListPulls  = "https://docs.github.com/rest/pulls/pulls#list-pull-requests"
	docCreatePull = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
	docGetPull    = "https://docs.github.com/rest/pulls/pulls#get-a-pull-request"
	docUpdatePull = "https://docs.github.com/rest/pulls/pulls#update-a-pull-request"
	docAppToken   = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"
)

// fieldError is one of a 422's errors.
type fieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field,omitempty"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
}

// reply writes v as GitHub writes JSON, with the headers every API answer carries.
func reply(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("FAKE:%d", time.Now().UnixNano()))
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "4999")
	h.Set("X-RateLimit-Used", "1")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// refuse writes GitHub's error body: {"message", "documentation_url", "status"}, with
// errors for a 422.
func refuse(w http.ResponseWriter, status int, message, doc string, errs ...fieldError) {
	body := map[string]any{"message": message, "documentation_url": doc, "status": strconv.Itoa(status)}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	reply(w, status, body)
}

// bearer is the token of an API request: "Authorization: Bearer X" or "token X".
func bearer(r *http.Request) string {
	a := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "bearer ", "token ", "Token "} {
		if t, ok := strings.CutPrefix(a, p); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// authorize checks the request's token against repo for need, answering GitHub's
// refusal when it fails. Called with s.mu held.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, need Permission, doc string) (*repository, *token, bool) {
	raw := bearer(r)
	if raw == "" {
		// A private repository is not found for a reader without a token, and a write
		// asks for one.
		if need == Write {
			refuse(w, http.StatusUnauthorized, "Requires authentication", docRoot)
		} else {
			refuse(w, http.StatusNotFound, "Not Found", doc)
		}
		return nil, nil, false
	}
	tk := s.tokens[raw]
	if tk == nil || !tk.expires.IsZero() && time.Now().After(tk.expires) {
		refuse(w, http.StatusUnauthorized, "Bad credentials", docRoot)
		return nil, nil, false
	}
	repo := s.repositories[r.PathValue("owner")+"/"+r.PathValue("repo")]
	if repo == nil || tk.grants[repo.path()] == 0 {
		refuse(w, http.StatusNotFound, "Not Found", doc)
		return nil, nil, false
	}
	if tk.grants[repo.path()] < need {
		who := "personal access token"
		if tk.integration {
			who = "integration"
		}
		refuse(w, http.StatusForbidden, "Resource not accessible by "+who, doc)
		return nil, nil, false
	}
	if need == Write && repo.archived {
		refuse(w, http.StatusForbidden, "Repository was archived so is read-only.", doc)
		return nil, nil, false
	}
	return repo, tk, true
}

// apiVersion refuses an X-GitHub-Api-Version GitHub does not know.
func apiVersion(w http.ResponseWriter, r *http.Request) bool {
	switch v := r.Header.Get("X-GitHub-Api-Version"); v {
	case "", "2022-11-28", "2026-03-10":
		return true
	default:
		refuse(w, http.StatusBadRequest, fmt.Sprintf("API version '%s' is not supported.", v), docRoot)
		return false
	}
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, _, ok := s.authorize(w, r, Read, docListPulls)
	if !ok {
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case "":
		state = "open"
	case "open", "closed", "all":
	default:
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docListPulls,
			fieldError{Resource: "Issue", Field: "state", Code: "invalid"})
		return
	}
	// head is "user:ref-name" or "organization:ref-name". GitHub ignores a head
	// without the owner: every pull request comes back, which is what the fake does
	// too, so an adapter that forgets the owner is caught.
	headOwner, headRef, headOK := strings.Cut(q.Get("head"), ":")
	base := q.Get("base")
	var out []*Pull
	for _, p := range repo.pulls {
		if state != "all" && p.State != state ||
			headOK && (headOwner != repo.owner || headRef != p.Head) ||
			base != "" && base != p.Base {
			continue
		}
		out = append(out, p)
	}
	sortBy, direction := q.Get("sort"), q.Get("direction")
	if sortBy == "" {
		sortBy = "created"
	}
	if direction == "" {
		direction = "asc"
		if sortBy == "created" {
			direction = "desc"
		}
	}
	slices.SortStableFunc(out, func(a, b *Pull) int {
		x, y := a.CreatedAt, b.CreatedAt
		if sortBy == "updated" {
			x, y = a.UpdatedAt, b.UpdatedAt
		}
		if c := x.Compare(y); c != 0 {
			return c
		}
		return a.Number - b.Number
	})
	if direction == "desc" {
		slices.Reverse(out)
	}
	perPage, page := 30, 1
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 {
		perPage = min(n, 100)
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 {
		page = n
	}
	from := min((page-1)*perPage, len(out))
	to := min(from+perPage, len(out))
	if to < len(out) {
		next := *r.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, s.URL, next.RequestURI()))
	}
	list := []map[string]any{}
	for _, p := range out[from:to] {
		list = append(list, s.pullJSON(repo, p, false))
	}
	reply(w, http.StatusOK, list)
}

// newPull is the body of a create, as GitHub reads it.
type newPull struct {
	Title               *string `json:"title"`
	Head                string  `json:"head"`
	HeadRepo            string  `json:"head_repo"`
	Base                string  `json:"base"`
	Body                *string `json:"body"`
	Draft               bool    `json:"draft"`
	Issue               int     `json:"issue"`
	MaintainerCanModify *bool   `json:"maintainer_can_modify"`
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, tk, ok := s.authorize(w, r, Write, docCreatePull)
	if !ok {
		return
	}
	var in newPull
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		refuse(w, http.StatusBadRequest, "Problems parsing JSON", docCreatePull)
		return
	}
	var missing []fieldError
	if in.Title == nil && in.Issue == 0 {
		missing = append(missing, fieldError{Resource: "PullRequest", Field: "title", Code: "missing_field"})
	}
	if in.Head == "" {
		missing = append(missing, fieldError{Resource: "PullRequest", Field: "head", Code: "missing_field"})
	}
	if in.Base == "" {
		missing = append(missing, fieldError{Resource: "PullRequest", Field: "base", Code: "missing_field"})
	}
	if len(missing) > 0 {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreatePull, missing...)
		return
	}
	if in.Issue != 0 {
		// Converting an issue into a pull request: the hub never does.
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreatePull,
			fieldError{Resource: "PullRequest", Field: "issue", Code: "invalid"})
		return
	}
	head := in.Head
	if owner, ref, ok := strings.Cut(in.Head, ":"); ok {
		if owner != repo.owner {
			// A fork's branch: the fake has no forks.
			refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreatePull,
				fieldError{Resource: "PullRequest", Field: "head", Code: "invalid"})
			return
		}
		head = ref
	}
	headSHA := s.repos.Head(repo.path(), head)
	var invalid []fieldError
	if headSHA == "" {
		invalid = append(invalid, fieldError{Resource: "PullRequest", Field: "head", Code: "invalid"})
	}
	if s.repos.Head(repo.path(), in.Base) == "" {
		invalid = append(invalid, fieldError{Resource: "PullRequest", Field: "base", Code: "invalid"})
	}
	if len(invalid) > 0 {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreatePull, invalid...)
		return
	}
	for _, p := range repo.pulls {
		if p.State == "open" && p.Head == head && p.Base == in.Base {
			refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreatePull, fieldError{Resource: "PullRequest", Code: "custom",
				Message: fmt.Sprintf("A pull request already exists for %s:%s.", repo.owner, head)})
			return
		}
	}
	if n, err := s.repos.Ahead(repo.path(), in.Base, head); err != nil || n == 0 {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreatePull, fieldError{Resource: "PullRequest", Code: "custom",
			Message: fmt.Sprintf("No commits between %s and %s", in.Base, head)})
		return
	}
	now := time.Now().UTC().Truncate(time.Second)
	s.nextID++
	p := &Pull{ID: s.nextID, Number: len(repo.pulls) + 1, Head: head, Base: in.Base, HeadSHA: headSHA,
		Draft: in.Draft, State: "open", Author: tk.login, CreatedAt: now, UpdatedAt: now}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	repo.pulls = append(repo.pulls, p)
	w.Header().Set("Location", fmt.Sprintf("%s/api/v3/repos/%s/pulls/%d", s.URL, repo.path(), p.Number))
	reply(w, http.StatusCreated, s.pullJSON(repo, p, true))
}

// numbered finds the pull request a route names, answering 404 when there is none.
func (s *Server) numbered(w http.ResponseWriter, r *http.Request, repo *repository, doc string) *Pull {
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil {
		refuse(w, http.StatusNotFound, "Not Found", doc)
		return nil
	}
	p := s.pull(repo.path(), n)
	if p == nil {
		refuse(w, http.StatusNotFound, "Not Found", doc)
	}
	return p
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, _, ok := s.authorize(w, r, Read, docGetPull)
	if !ok {
		return
	}
	if p := s.numbered(w, r, repo, docGetPull); p != nil {
		reply(w, http.StatusOK, s.pullJSON(repo, p, true))
	}
}

func (s *Server) updatePull(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, _, ok := s.authorize(w, r, Write, docUpdatePull)
	if !ok {
		return
	}
	p := s.numbered(w, r, repo, docUpdatePull)
	if p == nil {
		return
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		refuse(w, http.StatusBadRequest, "Problems parsing JSON", docUpdatePull)
		return
	}
	if in.Base != nil && *in.Base != p.Base {
		// Changing the base is a thing the hub never does.
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docUpdatePull,
			fieldError{Resource: "PullRequest", Field: "base", Code: "invalid"})
		return
	}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if in.State != nil {
		switch *in.State {
		case "closed":
			if p.State == "open" {
				p.State, p.ClosedAt = "closed", time.Now().UTC().Truncate(time.Second)
			}
		case "open":
			if p.State == "closed" && !p.Merged {
				p.State, p.ClosedAt = "open", time.Time{}
			}
		default:
			refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docUpdatePull,
				fieldError{Resource: "PullRequest", Field: "state", Code: "invalid"})
			return
		}
	}
	p.UpdatedAt = time.Now().UTC().Truncate(time.Second)
	reply(w, http.StatusOK, s.pullJSON(repo, p, true))
}

// pullJSON is a pull request as GitHub renders it: full for a single pull (GET,
// POST, PATCH), without merged and the counts in a list, as GitHub leaves them out.
// Called with s.mu held.
func (s *Server) pullJSON(repo *repository, p *Pull, full bool) map[string]any {
	if sha := s.repos.Head(repo.path(), p.Head); sha != "" && p.State == "open" {
		p.HeadSHA = sha
	}
	api := s.URL + "/api/v3/repos/" + repo.path()
	html := fmt.Sprintf("%s/%s/pull/%d", s.URL, repo.path(), p.Number)
	issue := fmt.Sprintf("%s/issues/%d", api, p.Number)
	author := user(p.Author)
	ref := func(branch, sha string) map[string]any {
		return map[string]any{"label": repo.owner + ":" + branch, "ref": branch, "sha": sha,
			"user": user(repo.owner), "repo": s.repoJSON(repo)}
	}
	m := map[string]any{
		"url":                 fmt.Sprintf("%s/pulls/%d", api, p.Number),
		"id":                  p.ID,
		"node_id":             "PR_kwFAKE" + strconv.FormatInt(p.ID, 10),
		"html_url":            html,
		"diff_url":            html + ".diff",
		"patch_url":           html + ".patch",
		"issue_url":           issue,
		"commits_url":         fmt.Sprintf("%s/pulls/%d/commits", api, p.Number),
		"review_comments_url": fmt.Sprintf("%s/pulls/%d/comments", api, p.Number),
		"review_comment_url":  api + "/pulls/comments{/number}",
		"comments_url":        issue + "/comments",
		"statuses_url":        api + "/statuses/" + p.HeadSHA,
		"number":              p.Number,
		"state":               p.State,
		"locked":              false,
		"title":               p.Title,
		"user":                author,
		"body":                nullString(p.Body),
		"labels":              []any{},
		"milestone":           nil,
		"active_lock_reason":  nil,
		"created_at":          stamp(p.CreatedAt),
		"updated_at":          stamp(p.UpdatedAt),
		"closed_at":           nullStamp(p.ClosedAt),
		"merged_at":           nullStamp(p.MergedAt),
		"merge_commit_sha":    nil,
		"assignee":            nil,
		"assignees":           []any{},
		"requested_reviewers": []any{},
		"requested_teams":     []any{},
		"head":                ref(p.Head, p.HeadSHA),
		"base":                ref(p.Base, s.repos.Head(repo.path(), p.Base)),
		"author_association":  "CONTRIBUTOR",
		"auto_merge":          nil,
		"draft":               p.Draft,
	}
	if p.Merged {
		m["merge_commit_sha"] = fmt.Sprintf("%040x", p.ID)
	}
	if full {
		m["merged"] = p.Merged
		m["mergeable"] = nil
		m["rebaseable"] = nil
		m["mergeable_state"] = "unknown"
		m["merged_by"] = nil
		if p.Merged {
			m["merged_by"] = user("octocat")
		}
		m["comments"], m["review_comments"], m["commits"] = 0, 0, 1
		m["additions"], m["deletions"], m["changed_files"] = 1, 0, 1
		m["maintainer_can_modify"] = false
	}
	return m
}

func (s *Server) repoJSON(repo *repository) map[string]any {
	return map[string]any{
		"id": repo.id, "node_id": "R_kgFAKE" + strconv.FormatInt(repo.id, 10),
		"name": repo.name, "full_name": repo.path(), "private": true, "owner": user(repo.owner),
		"html_url": s.URL + "/" + repo.path(), "url": s.URL + "/api/v3/repos/" + repo.path(),
		"clone_url": s.URL + "/" + repo.path() + ".git", "default_branch": "main",
		"archived": repo.archived, "fork": false, "visibility": "private",
	}
}

func user(login string) map[string]any {
	kind := "User"
	if strings.HasSuffix(login, "[bot]") {
		kind = "Bot"
	}
	return map[string]any{"login": login, "id": len(login), "type": kind, "site_admin": false}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func nullStamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// accessToken mints an installation token for an App whose JWT verifies
// (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	appID, ok := s.app(w, r, docAppToken)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	in := s.installations[id]
	if err != nil || in == nil || in.appID != appID {
		refuse(w, http.StatusNotFound, "Not Found", docAppToken)
		return
	}
	secret := make([]byte, 18)
	_, _ = rand.Read(secret)
	tok := "ghs_" + hex.EncodeToString(secret)
	expires := time.Now().Add(s.lifetime).UTC().Truncate(time.Second)
	grants := map[string]Permission{}
	for _, repo := range in.repos {
		grants[repo] = in.perm
	}
	s.tokens[tok] = &token{login: fmt.Sprintf("app-%d[bot]", appID), integration: true, grants: grants, expires: expires}
	in.tokens = append(in.tokens, tok)
	s.minted[id]++
	reply(w, http.StatusCreated, map[string]any{
		"token":                tok,
		"expires_at":           stamp(expires),
		"permissions":          in.permissions(),
		"repository_selection": "selected",
	})
}

// app is the App whose JWT authenticates r, or false once GitHub's refusal is written
// (doc: the route's documentation). Called with s.mu held.
func (s *Server) app(w http.ResponseWriter, r *http.Request, doc string) (int64, bool) {
	raw := bearer(r)
	if raw == "" {
		refuse(w, http.StatusUnauthorized, "Requires authentication", doc)
		return 0, false
	}
	appID, msg := s.verifyJWT(raw, time.Now())
	if msg != "" {
		refuse(w, http.StatusUnauthorized, msg, docRoot)
		return 0, false
	}
	return appID, true
}

// verifyJWT checks an App's JWT as GitHub does: RS256, signed by the app's key, iss
// the app id, iat not in the future and exp in the future by at most ten minutes
// (each with a minute's leeway for clock drift). It returns the app id, or GitHub's
// words for what is wrong. Called with s.mu held.
func (s *Server) verifyJWT(raw string, now time.Time) (int64, string) {
	const undecodable = "A JSON web token could not be decoded"
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return 0, undecodable
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat *int64          `json:"iat"`
		Exp *int64          `json:"exp"`
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil || header.Alg != "RS256" {
		return 0, undecodable
	}
	// iss is the app id, as a number or a string (GitHub takes either, and the client
	// id too, which the fake does not know).
	iss := strings.Trim(string(claims.Iss), `"`)
	appID, err := strconv.ParseInt(iss, 10, 64)
	key := s.apps[appID]
	if err != nil || key == nil {
		return 0, undecodable
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig) != nil {
		return 0, undecodable
	}
	const leeway = time.Minute
	switch {
	case claims.Iat == nil || time.Unix(*claims.Iat, 0).After(now.Add(leeway)):
		return 0, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued."
	case claims.Exp == nil || !time.Unix(*claims.Exp, 0).After(now):
		return 0, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires."
	case time.Unix(*claims.Exp, 0).After(now.Add(10*time.Minute + leeway)):
		return 0, "'Expiration time' claim ('exp') is too far in the future."
	}
	return appID, ""
}

// gitOrUnknown serves git's smart HTTP protocol at /owner/name.git, and answers any
// other route 404, recording it.
func (s *Server) gitOrUnknown(w http.ResponseWriter, r *http.Request) {
	path, push, ok := forgetest.GitRequest(r)
	if !ok {
		s.mu.Lock()
		s.unexpected = append(s.unexpected, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		refuse(w, http.StatusNotFound, "Not Found", docRoot)
		return
	}
	// git sends credentials only once asked: a 401 with a Basic challenge. The user
	// name is anything (x-access-token by custom); the password is the token.
	challenge := func() {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token. Password authentication is not supported for Git operations.", http.StatusUnauthorized)
	}
	_, password, hasAuth := r.BasicAuth()
	if !hasAuth {
		challenge()
		return
	}
	s.mu.Lock()
	tk := s.tokens[password]
	repo := s.repositories[path]
	var grant Permission
	if tk != nil && (tk.expires.IsZero() || time.Now().Before(tk.expires)) {
		grant = tk.grants[path]
	} else {
		tk = nil
	}
	archived := repo != nil && repo.archived
	s.mu.Unlock()
	switch {
	case tk == nil:
		challenge()
	case repo == nil || grant == 0:
		http.Error(w, "Repository not found.", http.StatusNotFound)
	case push && grant < Write:
		http.Error(w, fmt.Sprintf("Permission to %s.git denied to %s.", path, tk.login), http.StatusForbidden)
	case push && archived:
		http.Error(w, "This repository was archived so it is read-only.", http.StatusForbidden)
	default:
		s.repos.ServeGit(w, r)
	}
}
