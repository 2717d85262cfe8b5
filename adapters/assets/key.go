package assets

import (
	"errors"
	"path/filepath"
	"strings"
)

// ErrBadKey is returned for a key that could name a file outside the store.
var ErrBadKey = errors.New("invalid blob key")

// path maps a key such as "asset_0123456789abcdef/0123456789abcdef" to its file.
// Keys come from core, not from clients, but a store that writes files checks anyway:
// at most one '/', no empty or dot segments, no backslashes or NULs, not absolute.
func (s *FS) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, filepath.FromSlash(key)), nil
}

func checkKey(key string) error {
	if key == "" || strings.ContainsAny(key, "\\\x00") {
		return ErrBadKey
	}
	segs := strings.Split(key, "/")
	if len(segs) > 2 {
		return ErrBadKey
	}
	for _, seg := range segs {
		// Dot segments, and names that start with '.', which also keeps keys apart from
		// the temporary files Put writes (".tmp-*").
		if seg == "" || strings.HasPrefix(seg, ".") || strings.Contains(seg, "..") {
			return ErrBadKey
		}
	}
	return nil
}
