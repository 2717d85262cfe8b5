// Package page reads the newest items of a forge's list that gives them oldest
// first, a page at a time (GitHub's and Gitea's issue comments).
package page

// Newest returns the newest n items of a list, oldest first. list reads page number
// (from 1) and says the number of the last page (0 or 1: there is one). The newest are
// on the last page, and the page before it when that one holds fewer than n.
func Newest[T any](n int, list func(number int) (items []T, last int, err error)) ([]T, error) {
	items, last, err := list(1)
	if err != nil {
		return nil, err
	}
	if last > 1 {
		newest, _, err := list(last)
		if err != nil {
			return nil, err
		}
		if len(newest) < n && last > 2 {
			if items, _, err = list(last - 1); err != nil {
				return nil, err
			}
		}
		items = append(items, newest...)
	}
	return items[max(0, len(items)-n):], nil
}
