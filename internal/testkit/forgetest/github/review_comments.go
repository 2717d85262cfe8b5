package github

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

const (
	docReplyReviewComment  = "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment"
	docCreateReviewComment = "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request"
)

// ReviewComment is a comment on a line of a pull request's diff, as the fake holds
// it: a thread's first comment (InReplyTo 0), or a reply in its thread.
type ReviewComment struct {
	ID        int64
	Pull      int
	Path      string
	Line      int
	Body      string
	Author    string
	InReplyTo int64
}

// AddReviewComment writes a review comment by login on line of path in pull request
// number of owner/name, as that person would on GitHub, and returns its id.
func (s *Server) AddReviewComment(owner, name string, number int, login, path string, line int, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := s.repositories[owner+"/"+name]
	s.nextID++
	repo.reviewComments = append(repo.reviewComments, &ReviewComment{ID: s.nextID, Pull: number, Path: path, Line: line, Body: body, Author: login})
	return s.nextID
}

// ReviewReplies lists the replies in the review thread of comment id of owner/name,
// oldest first.
func (s *Server) ReviewReplies(owner, name string, id int64) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ReviewComment
	if repo := s.repositories[owner+"/"+name]; repo != nil {
		for _, c := range repo.reviewComments {
			if c.InReplyTo == id {
				out = append(out, *c)
			}
		}
	}
	return out
}

// replyToReviewComment answers POST /repos/{owner}/{repo}/pulls/{number}/comments/{id}/replies:
// a reply in the thread of a review comment of that pull request.
func (s *Server) replyToReviewComment(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct {
		Body *string `json:"body"`
	}
	if !decodeReview(w, r, &in, docReplyReviewComment) {
		return
	}
	s.addReviewReply(w, r, id, in.Body, docReplyReviewComment)
}

// createReviewComment answers POST /repos/{owner}/{repo}/pulls/{number}/comments with
// in_reply_to (go-github's CreateCommentInReplyTo): a reply, every field but the body
// ignored. A new thread on a line (commit_id, path, line) is not something the fake
// makes: refused as GitHub refuses one without them.
func (s *Server) createReviewComment(w http.ResponseWriter, r *http.Request) {
	if !apiVersion(w, r) {
		return
	}
	var in struct {
		Body      *string `json:"body"`
		InReplyTo int64   `json:"in_reply_to"`
	}
	if !decodeReview(w, r, &in, docCreateReviewComment) {
		return
	}
	if in.InReplyTo == 0 {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", docCreateReviewComment,
			fieldError{Resource: "PullRequestReviewComment", Field: "commit_id", Code: "missing_field"})
		return
	}
	s.addReviewReply(w, r, in.InReplyTo, in.Body, docCreateReviewComment)
}

func decodeReview(w http.ResponseWriter, r *http.Request, in any, doc string) bool {
	if err := json.NewDecoder(r.Body).Decode(in); err != nil {
		refuse(w, http.StatusBadRequest, "Problems parsing JSON", doc)
		return false
	}
	return true
}

// addReviewReply adds body as a reply to review comment id of the request's pull
// request (GitHub does not thread replies to replies: the reply joins the first
// comment's thread).
func (s *Server) addReviewReply(w http.ResponseWriter, r *http.Request, id int64, body *string, doc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo, tk, ok := s.authorize(w, r, Write, doc)
	if !ok {
		return
	}
	number, _ := strconv.Atoi(r.PathValue("number"))
	var to *ReviewComment
	for _, c := range repo.reviewComments {
		if c.ID == id && c.Pull == number {
			to = c
		}
	}
	if to == nil {
		refuse(w, http.StatusNotFound, "Not Found", doc)
		return
	}
	if body == nil || *body == "" {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed", doc,
			fieldError{Resource: "PullRequestReviewComment", Field: "body", Code: "missing_field"})
		return
	}
	top := cmp.Or(to.InReplyTo, to.ID)
	s.nextID++
	c := &ReviewComment{ID: s.nextID, Pull: number, Path: to.Path, Line: to.Line, Body: *body, Author: tk.login, InReplyTo: top}
	repo.reviewComments = append(repo.reviewComments, c)
	now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	reply(w, http.StatusCreated, map[string]any{"id": c.ID, "body": c.Body, "path": c.Path, "line": c.Line,
		"in_reply_to_id": c.InReplyTo, "created_at": now, "updated_at": now, "user": map[string]any{"login": c.Author},
		"html_url": s.URL + "/" + repo.path() + "/pull/" + strconv.Itoa(number) + "#discussion_r" + strconv.FormatInt(c.ID, 10)})
}
