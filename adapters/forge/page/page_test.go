package page

import (
	"errors"
	"slices"
	"testing"
)

// The newest n of a list of 1..total, pages of size: from the last page, with the one
// before it when the last is short.
func TestNewestReadsTheLastPages(t *testing.T) {
	for _, tt := range []struct {
		total, size, n int
		want           []int
		read           []int // the pages read, in order
	}{
		{0, 10, 3, nil, []int{1}},
		{4, 10, 3, []int{2, 3, 4}, []int{1}},
		{12, 10, 3, []int{10, 11, 12}, []int{1, 2}},
		{31, 10, 3, []int{29, 30, 31}, []int{1, 4, 3}},
		{35, 10, 3, []int{33, 34, 35}, []int{1, 4}},
	} {
		var read []int
		got, err := Newest(tt.n, func(number int) ([]int, int, error) {
			read = append(read, number)
			var items []int
			for i := (number-1)*tt.size + 1; i <= min(number*tt.size, tt.total); i++ {
				items = append(items, i)
			}
			return items, (tt.total + tt.size - 1) / tt.size, nil
		})
		if err != nil || !slices.Equal(got, tt.want) || !slices.Equal(read, tt.read) {
			t.Errorf("%d items in pages of %d: expected %v reading pages %v, got %v reading %v (%v)", tt.total, tt.size, tt.want, tt.read, got, read, err)
		}
	}
	boom := errors.New("boom")
	if _, err := Newest(3, func(int) ([]int, int, error) { return nil, 0, boom }); !errors.Is(err, boom) {
		t.Errorf("expected the list's error, got %v", err)
	}
}
