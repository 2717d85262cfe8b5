package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/wshub/wshub/internal/nofollow"
)

// indexGitlinks lists the gitlinks (mode 160000) of the git index file at path, as
// `git ls-files --stage` would, by reading the file itself: the change check of every
// turn otherwise starts a git process for it. ok is false when the file is in a form
// this does not read, or does not read with certainty (a split or sparse index, a
// checksum that does not match or is not written, a version other than 2 to 4); the
// caller then asks git. A missing index has no gitlinks.
//
// Certainty matters: a gitlink missed here is not excluded from `git add -A`, which
// would then look into that embedded repository (CommitAll). So every entry and
// extension is walked to the checksum, which must match.
func indexGitlinks(path string) (links []string, ok bool) {
	b, err := readIndex(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	// The checksum says which hash the repository uses: SHA-1, or SHA-256.
	for _, h := range []func() hash.Hash{sha1.New, sha256.New} {
		if links, ok := parseIndex(b, h()); ok {
			return links, true
		}
	}
	return nil, false
}

// maxIndexBytes is the largest index read here: a checkout of 50,000 files has one of
// a few MiB. A larger file is git's to read, in a process of its own.
const maxIndexBytes = 64 << 20

// readIndex reads the index file at path, which must be a regular file of at most
// maxIndexBytes: the agent may have left anything there, and a FIFO would block the
// read (O_NONBLOCK: the open does not wait for a writer either).
func readIndex(path string) ([]byte, error) {
	f, err := nofollow.Open(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return nil, errors.New("not an index file git writes")
	}
	return io.ReadAll(io.LimitReader(f, maxIndexBytes+1))
}

// Index entry fields (Documentation/gitformat-index.txt).
const (
	indexHeader     = 12         // "DIRC", version, entry count
	entryStatBytes  = 40         // ctime, mtime, dev, ino, mode, uid, gid, size
	entryModeOffset = 24         // mode, within the stat data
	flagExtended    = 0x4000     // two more bytes of flags (version 3 and later)
	flagNameMask    = 0x0fff     // the name's length, 0xfff when it is that long or longer
	modeGitlink     = 0o160000   // a gitlink's mode
	modeTypeMask    = 0o170000   // the type bits of a mode
	modeDir         = 0o040000   // a sparse index's directory entry
	maxIndexEntries = 50_000_000 // more than any index git writes: the file is not one
)

// parseIndex reads the gitlinks of index file b whose checksum is h; ok is false when b
// is not an index of that hash that parseIndex reads in full.
func parseIndex(b []byte, h hash.Hash) (links []string, ok bool) {
	hashLen := h.Size()
	if len(b) < indexHeader+hashLen || string(b[:4]) != "DIRC" {
		return nil, false
	}
	body, sum := b[:len(b)-hashLen], b[len(b)-hashLen:]
	if bytes.Equal(sum, make([]byte, hashLen)) {
		return nil, false // index.skipHash: nothing says the file is whole
	}
	h.Write(body)
	if !bytes.Equal(h.Sum(nil), sum) {
		return nil, false
	}
	version := binary.BigEndian.Uint32(body[4:])
	n := binary.BigEndian.Uint32(body[8:])
	if version < 2 || version > 4 || n > maxIndexEntries {
		return nil, false
	}
	off := indexHeader
	var name []byte // version 4: each name is made from the one before
	for range n {
		start := off
		fixed := entryStatBytes + hashLen + 2
		if off+fixed > len(body) {
			return nil, false
		}
		mode := binary.BigEndian.Uint32(body[off+entryModeOffset:])
		flags := binary.BigEndian.Uint16(body[off+entryStatBytes+hashLen:])
		off += fixed
		if flags&flagExtended != 0 {
			if version < 3 || off+2 > len(body) {
				return nil, false
			}
			off += 2
		}
		if version == 4 {
			strip, used := gitVarint(body[off:])
			if used == 0 || strip > uint64(len(name)) {
				return nil, false
			}
			off += used
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, false
			}
			name = append(name[:len(name)-int(strip)], body[off:off+end]...)
			off += end + 1
			if !nameLenAgrees(flags, len(name)) {
				return nil, false
			}
		} else {
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 || !nameLenAgrees(flags, end) {
				return nil, false
			}
			name = append(name[:0], body[off:off+end]...)
			// Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
			off = start + (off-start+end+8)&^7
			if off > len(body) {
				return nil, false
			}
		}
		switch mode & modeTypeMask {
		case modeGitlink:
			links = append(links, string(name))
		case modeDir:
			return nil, false // a sparse index: what the directory holds is not listed here
		}
	}
	// Extensions, each a signature and a length, up to the checksum.
	for off < len(body) {
		if off+8 > len(body) {
			return nil, false
		}
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if sig == "link" || sig == "sdir" {
			return nil, false // split index (entries elsewhere), sparse index
		}
		if size < 0 || size > len(body)-off-8 {
			return nil, false
		}
		off += 8 + size
	}
	return links, true
}

// nameLenAgrees reports whether an entry's flags give its name's length n, as git
// reads it (the flags' length when it is under 0xfff, else up to the NUL).
func nameLenAgrees(flags uint16, n int) bool {
	if l := int(flags & flagNameMask); l != flagNameMask {
		return n == l
	}
	return n >= flagNameMask
}

// gitVarint decodes git's offset varint (varint.c), returning the value and the bytes
// it took (0: not a varint).
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		val++
		if val == 0 || val>>57 != 0 {
			return 0, 0
		}
		if i >= len(b) {
			return 0, 0
		}
		c = b[i]
		i++
		val = val<<7 + uint64(c&127)
	}
	return val, i
}
