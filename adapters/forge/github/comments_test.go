package github_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/wshub/wshub/core"
)

// An issue's newest comments are read from GitHub's last pages (it lists them oldest
// first, a hundred a page): of 201, the last page holds one, so the page before it is
// read too.
func TestTheNewestCommentsOfALongIssueAreRead(t *testing.T) {
	s, f, p := setup(t)
	for i := 1; i <= 201; i++ {
		s.AddComment(owner, name, 9, "bob", fmt.Sprint("comment ", i))
	}
	got, err := f.RecentIssueComments(t.Context(), p, 9, 3)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, c := range got {
		if c.Login != "bob" {
			t.Errorf("expected bob's comments, got one by %q", c.Login)
		}
		bodies = append(bodies, c.Body)
	}
	if want := []string{"comment 199", "comment 200", "comment 201"}; !slices.Equal(bodies, want) {
		t.Errorf("expected %q, got %q", want, bodies)
	}
}

// A reply in a review thread goes in the thread of the comment it answers, as go-github
// asks for it (a review comment in reply to); a reply to a reply joins the same thread,
// and an unknown comment is GitHub's refusal.
func TestARepliesGoInAReviewCommentsThread(t *testing.T) {
	s, f, p := setup(t)
	top := s.AddReviewComment(owner, name, 4, "bob", "x.go", 3, "why?")
	ref, err := f.ReplyInReview(t.Context(), p, 4, fmt.Sprint(top), "because")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReplyInReview(t.Context(), p, 4, ref, "and so"); err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, c := range s.ReviewReplies(owner, name, top) {
		bodies = append(bodies, c.Body)
	}
	if want := []string{"because", "and so"}; !slices.Equal(bodies, want) {
		t.Errorf("expected the thread's replies %q, got %q", want, bodies)
	}
	var r *core.ForgeRefusal
	if _, err := f.ReplyInReview(t.Context(), p, 5, fmt.Sprint(top), "elsewhere"); !errors.As(err, &r) || r.Status != 404 {
		t.Errorf("expected GitHub's 404 for a comment of another pull request, got %v", err)
	}
}
