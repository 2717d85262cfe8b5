package gitlab

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Note is an issue's or a merge request's note (comment) as the fake holds it. The
// fake keeps no issues: a note may be made on any iid.
type Note struct {
	ID    int64
	Issue int64 // the issue's (or the merge request's) iid
	// Noteable is "Issue" or "MergeRequest", as GitLab names what a note is on.
	Noteable string
	Body     string
	// Author is who wrote it ("": the token's holder, the hub, as "wshub").
	Author string
	// Edits counts the times it was changed after it was made.
	Edits int
	// Discussion is the id of the diff's discussion it is in ("": a note of its own,
	// in the merge request's or issue's overview).
	Discussion string
}

// The kinds of notes, as GitLab names what a note is on.
const (
	issueNotes        = "Issue"
	mergeRequestNotes = "MergeRequest"
)

// Notes lists the notes on issue iid of the project at path, oldest first.
func (s *Server) Notes(path string, iid int64) []Note { return s.notesOn(path, issueNotes, iid) }

// MergeRequestNotes lists the notes on merge request iid of the project at path that
// are in no diff's discussion (its overview's), oldest first.
func (s *Server) MergeRequestNotes(path string, iid int64) []Note {
	return s.notesOn(path, mergeRequestNotes, iid)
}

func (s *Server) notesOn(path, noteable string, iid int64) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Note
	if p := s.projects[path]; p != nil {
		for _, n := range p.notes {
			if n.Issue == iid && n.Noteable == noteable && n.Discussion == "" {
				out = append(out, *n)
			}
		}
	}
	return out
}

// AddNote writes a note by username on issue iid of the project at path, as that
// person would on GitLab, and returns its id.
func (s *Server) AddNote(path string, iid int64, username, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[path]
	s.nextID++
	p.notes = append(p.notes, &Note{ID: s.nextID, Issue: iid, Noteable: issueNotes, Body: body, Author: username})
	return s.nextID
}

// listIssueNotes lists an issue's notes, newest first when asked (sort=desc), at most
// per_page (20 unless asked, 100 at most) of the first page: the hub reads no other.
func (s *Server) listIssueNotes(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Read)
	if !ok {
		return
	}
	iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	var notes []*Note
	for _, n := range p.notes {
		if n.Issue == iid && n.Noteable == issueNotes {
			notes = append(notes, n)
		}
	}
	if r.URL.Query().Get("sort") == "desc" {
		slices.Reverse(notes)
	}
	size, err := strconv.Atoi(r.URL.Query().Get("per_page"))
	if err != nil || size < 1 {
		size = 20
	}
	out := []map[string]any{}
	for _, n := range notes[:min(len(notes), size, 100)] {
		out = append(out, noteJSON(p, n))
	}
	reply(w, http.StatusOK, out)
}

func (s *Server) createNote(noteable string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.addNote(w, r, noteable) }
}

func (s *Server) addNote(w http.ResponseWriter, r *http.Request, noteable string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Write)
	if !ok {
		return
	}
	iid, err := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	if err != nil || iid < 1 {
		refuse(w, http.StatusNotFound, "404 "+noteable+" Not Found")
		return
	}
	s.putNote(w, r, p, &Note{Issue: iid, Noteable: noteable})
}

// putNote makes n, with the request's body, a new note of the project, and answers it.
// Called with s.mu held.
func (s *Server) putNote(w http.ResponseWriter, r *http.Request, p *project, n *Note) {
	body, ok := noteBody(w, r)
	if !ok {
		return
	}
	s.nextID++
	n.ID, n.Body = s.nextID, body
	p.notes = append(p.notes, n)
	reply(w, http.StatusCreated, noteJSON(p, n))
}

func (s *Server) updateNote(noteable string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.editNote(w, r, noteable) }
}

func (s *Server) editNote(w http.ResponseWriter, r *http.Request, noteable string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Write)
	if !ok {
		return
	}
	iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	id, _ := strconv.ParseInt(r.PathValue("note"), 10, 64)
	for _, n := range p.notes {
		if n.ID == id && n.Issue == iid && n.Noteable == noteable {
			body, ok := noteBody(w, r)
			if !ok {
				return
			}
			n.Body = body
			n.Edits++
			reply(w, http.StatusOK, noteJSON(p, n))
			return
		}
	}
	refuse(w, http.StatusNotFound, "404 Not found")
}

// noteBody reads a note's body, which GitLab requires.
func noteBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		refuse(w, http.StatusBadRequest, "400 Bad request - body is missing")
		return "", false
	}
	return in.Body, true
}

// noteJSON is a note as GitLab renders it.
func noteJSON(p *project, n *Note) map[string]any {
	now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	return map[string]any{"id": n.ID, "body": n.Body, "noteable_type": n.Noteable, "noteable_iid": n.Issue,
		"project_id": p.id, "created_at": now, "updated_at": now, "system": false,
		"author": map[string]any{"username": cmp.Or(n.Author, "wshub")}}
}

// AddMember makes the user of id a member of the project at path with access level
// (10 Guest, 20 Reporter, 30 Developer, 40 Maintainer, 50 Owner); someone never added
// is not found among its members.
func (s *Server) AddMember(path string, id int64, username string, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[path]
	if p.members == nil {
		p.members = map[int64]member{}
	}
	p.members[id] = member{username: username, level: level}
}

type member struct {
	username string
	level    int
}

func (s *Server) getMember(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Read)
	if !ok {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("user"), 10, 64)
	m, known := p.members[id]
	if !known {
		refuse(w, http.StatusNotFound, "404 Not found")
		return
	}
	reply(w, http.StatusOK, map[string]any{"id": id, "username": m.username, "access_level": m.level, "state": "active"})
}
