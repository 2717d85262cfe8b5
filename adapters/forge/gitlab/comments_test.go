package gitlab_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/wshub/wshub/core"
)

// A reply in a review thread is a note in the diff's discussion (the merge request's
// discussion notes route, the project named URL-encoded); an unknown discussion is
// GitLab's refusal.
func TestARepliesGoInADiffsDiscussion(t *testing.T) {
	s, f, p := setup(t)
	discussion, _ := s.AddDiffNote(path, 4, "bob", "why?")
	if _, err := f.ReplyInReview(t.Context(), p, 4, discussion, "because"); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, n := range s.DiscussionNotes(path, 4, discussion) {
		bodies = append(bodies, n.Body)
	}
	if want := []string{"why?", "because"}; !slices.Equal(bodies, want) {
		t.Errorf("expected the discussion's notes %q, got %q", want, bodies)
	}
	if len(s.MergeRequestNotes(path, 4)) != 0 {
		t.Errorf("expected no note in the merge request's overview, got %v", s.MergeRequestNotes(path, 4))
	}
	var r *core.ForgeRefusal
	if _, err := f.ReplyInReview(t.Context(), p, 5, discussion, "elsewhere"); !errors.As(err, &r) || r.Status != 404 {
		t.Errorf("expected GitLab's 404 for another merge request's discussion, got %v", err)
	}
}
