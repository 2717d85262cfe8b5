package core

import (
	"slices"
	"strings"
	"testing"
)

// The comments kept as context: the newest first, the request's own, the hub's,
// bots' and empty ones left out, at most maxContextComments, cut to maxContextBytes
// in all, oldest first.
func TestRecentCommentsAreBounded(t *testing.T) {
	long := strings.Repeat("é", maxContextBytes) // two bytes a rune
	all := []ForgeComment{
		{ID: 1, Login: "old", Body: "the oldest"},
		{ID: 2, Login: "a", Body: long},
		{ID: 3, Login: "b", Body: "three"},
		{ID: 4, Login: "hub", Body: "working\n\n" + ForgeCommentMark},
		{ID: 5, Login: "ci", Body: "built", Bot: true},
		{ID: 6, Login: "c", Body: "  "},
		{ID: 7, Login: "d", Body: "four"},
		{ID: 8, Login: "e", Body: "five"},
		{ID: 9, Login: "f", Body: "six"},
		{ID: 10, Login: "asker", Body: "@wshub do it"},
	}
	got := boundComments(all, 10)
	var ids []int64
	size := 0
	for _, c := range got {
		ids = append(ids, c.ID)
		size += len(c.Body)
	}
	if want := []int64{2, 3, 7, 8, 9}; !slices.Equal(ids, want) {
		t.Fatalf("expected comments %v, got %v", want, ids)
	}
	if size > maxContextBytes || !strings.HasSuffix(got[0].Body, "…") || !strings.HasPrefix(got[0].Body, "éé") {
		t.Errorf("expected the long comment cut to fit %d bytes in all, got %d bytes ending %q", maxContextBytes, size, got[0].Body[len(got[0].Body)-8:])
	}
	if got := boundComments(nil, 1); len(got) != 0 {
		t.Errorf("expected no comments from none, got %v", got)
	}
}
