package github_test

import (
	"fmt"
	"slices"
	"testing"
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
