package gitlab

import (
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"strconv"
)

// AddDiffNote writes a note by username on a line of merge request iid's diff of the
// project at path, as that person would on GitLab: the first note of a discussion of
// its own. It returns the discussion's id and the note's.
func (s *Server) AddDiffNote(path string, iid int64, username, body string) (discussion string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[path]
	s.nextID++
	// GitLab's discussion ids are 40 hex digits.
	sum := sha1.Sum([]byte(path + "#" + strconv.FormatInt(s.nextID, 10)))
	discussion = hex.EncodeToString(sum[:])
	p.notes = append(p.notes, &Note{ID: s.nextID, Issue: iid, Noteable: mergeRequestNotes, Body: body, Author: username, Discussion: discussion})
	return discussion, s.nextID
}

// DiscussionNotes lists the notes of a discussion of merge request iid of the project
// at path, oldest first.
func (s *Server) DiscussionNotes(path string, iid int64, discussion string) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Note
	if p := s.projects[path]; p != nil {
		for _, n := range p.notes {
			if n.Issue == iid && n.Noteable == mergeRequestNotes && n.Discussion == discussion {
				out = append(out, *n)
			}
		}
	}
	return out
}

// addDiscussionNote answers POST /projects/:id/merge_requests/:iid/discussions/:discussion_id/notes:
// a note added to an existing discussion of the merge request.
func (s *Server) addDiscussionNote(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.authorize(w, r, Write)
	if !ok {
		return
	}
	iid, _ := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	discussion := r.PathValue("discussion")
	known := false
	for _, n := range p.notes {
		known = known || n.Issue == iid && n.Noteable == mergeRequestNotes && n.Discussion == discussion
	}
	if !known || discussion == "" {
		refuse(w, http.StatusNotFound, "404 Discussion Not Found")
		return
	}
	s.putNote(w, r, p, &Note{Issue: iid, Noteable: mergeRequestNotes, Discussion: discussion})
}
