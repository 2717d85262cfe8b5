package machines

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// attachmentDir is where attachments are placed, relative to the checkout.
var attachmentDir = []string{".context", "files"}

// errNotADirectory: a .context or .context/files that is a symlink or a file. The
// repository or a turn put it there; the hub writes nothing through it.
var errNotADirectory = errors.New("is not a directory (a symlink or a file); attachments are not written through it")

// writeBeneath writes data to dir/.context/files/name without following any symlink
// out of the checkout: the checkout's content is the agent's (and the repository's),
// and a committed `.context/files -> /outside`, or a symlink a turn planted at the
// file's name, must not make the hub write elsewhere with its own rights.
//
//   - os.Root confines every step to the checkout: no path, symlink or ".." leads out.
//     It does follow a symlink that stays inside; that is acceptable (a write inside
//     the agent's own checkout gives it nothing it could not do itself), and none is
//     followed here anyway:
//   - .context and .context/files must be real directories (Lstat), made when missing.
//     A symlink there is refused even when it points inside the checkout: the turn is
//     told, rather than the file landing somewhere the prompt does not name.
//   - The file is written under a fresh random name (O_EXCL: a new file, never an
//     existing one or a symlink) and renamed over the final name, so whatever was
//     there (a symlink included) is replaced, not followed.
func writeBeneath(dir, name string, data []byte) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("open checkout: %w", err)
	}
	defer root.Close()
	rel := ""
	for _, d := range attachmentDir {
		rel = filepath.Join(rel, d)
		fi, err := root.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Mkdir(rel, 0o755); err != nil {
				return "", fmt.Errorf("make %s: %w", rel, err)
			}
		case err != nil:
			return "", fmt.Errorf("inspect %s: %w", rel, err)
		case !fi.IsDir():
			return "", fmt.Errorf("%s %w", rel, errNotADirectory)
		}
	}
	final := filepath.Join(rel, name)
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	tmp := filepath.Join(rel, ".wshub-"+hex.EncodeToString(suffix)+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", final, err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	if err := root.Rename(tmp, final); err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("place %s: %w", final, err)
	}
	return final, nil
}
