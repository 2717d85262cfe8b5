package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A remote runtime's upload is read here before any git command sees it. git fetch
// takes any path it is given as a repository when the file is not a bundle (a
// "gitdir: ../other.git" file is a repository), so the hub reads the bundle format
// itself and hands git only the pack inside it, on standard input.

// bundleHeader is what a git bundle (v2 or v3) says before its pack.
type bundleHeader struct {
	// hexLen is the length of an object id: 40 (sha1) or 64 (sha256).
	hexLen        int
	prerequisites []string
	refs          map[string]string // refname -> object id
	// packOffset is where the pack starts in the file.
	packOffset int64
}

// Limits of a bundle's header: a runtime's bundle has one ref and the few commits it
// builds on.
const (
	maxBundleHeaderLine = 1024
	maxBundlePrereqs    = 1000
	maxBundleRefs       = 10
)

// errNotBundle: the upload is not a git bundle the hub takes.
var errNotBundle = errors.New("not a git bundle")

// readBundleHeader reads and checks a bundle's header: a v2 or v3 signature, v3's only
// capability being the object format, prerequisites and refs made of object ids and
// ref names, then a blank line. The pack starts right after it.
func readBundleHeader(r io.Reader) (*bundleHeader, error) {
	br := bufio.NewReaderSize(r, 4096)
	h := &bundleHeader{hexLen: 40, refs: map[string]string{}}
	var off int64
	line := func() (string, error) {
		l, err := br.ReadSlice('\n')
		if err != nil || len(l) > maxBundleHeaderLine {
			return "", fmt.Errorf("%w: the header is cut or has an overlong line", errNotBundle)
		}
		off += int64(len(l))
		return string(l[:len(l)-1]), nil
	}
	sig, err := line()
	if err != nil {
		return nil, err
	}
	v3 := sig == "# v3 git bundle"
	if !v3 && sig != "# v2 git bundle" {
		return nil, fmt.Errorf("%w: no v2 or v3 bundle signature", errNotBundle)
	}
	for {
		l, err := line()
		if err != nil {
			return nil, err
		}
		switch {
		case l == "":
			h.packOffset = off
			if len(h.refs) == 0 {
				return nil, fmt.Errorf("%w: it names no ref", errNotBundle)
			}
			return h, nil
		case strings.HasPrefix(l, "@"):
			if !v3 || len(h.prerequisites) > 0 || len(h.refs) > 0 {
				return nil, fmt.Errorf("%w: a capability out of place", errNotBundle)
			}
			switch l {
			case "@object-format=sha1":
				h.hexLen = 40
			case "@object-format=sha256":
				h.hexLen = 64
			default:
				// @filter (a partial bundle) and anything newer are not taken.
				return nil, fmt.Errorf("%w: capability %.40q is not supported", errNotBundle, l)
			}
		case strings.HasPrefix(l, "-"):
			id, _, _ := strings.Cut(l[1:], " ")
			if !h.isID(id) || len(h.refs) > 0 || len(h.prerequisites) >= maxBundlePrereqs {
				return nil, fmt.Errorf("%w: a bad prerequisite line", errNotBundle)
			}
			h.prerequisites = append(h.prerequisites, id)
		default:
			id, ref, ok := strings.Cut(l, " ")
			if !ok || !h.isID(id) || !plainRefName(ref) || len(h.refs) >= maxBundleRefs {
				return nil, fmt.Errorf("%w: a bad ref line", errNotBundle)
			}
			h.refs[ref] = id
		}
	}
}

// isID reports whether s is a lowercase hex object id of the bundle's format.
func (h *bundleHeader) isID(s string) bool {
	if len(s) != h.hexLen {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// plainRefName: a ref name of printable ASCII without the characters git refuses
// (git check-ref-format decides the rest, when the ref is used).
func plainRefName(s string) bool {
	if !strings.HasPrefix(s, "refs/") || len(s) > 255 {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return true
}

// Pack object types (gitformat-pack).
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

// packLimits bound the work a pack can cause before git indexes it.
type packLimits struct {
	// maxObject is the largest an object may be once inflated (a delta: its result).
	maxObject int64
	// maxTotal is what all of the pack's objects may add up to, inflated.
	maxTotal int64
	// maxObjects bounds their count.
	maxObjects uint32
}

// errObjectTooLarge and errPackTooLarge: the pack would inflate past a limit.
var (
	errObjectTooLarge = errors.New("an object is larger than the hub takes")
	errPackTooLarge   = errors.New("the objects add up to more than the hub takes")
)

// scanPack walks a pack's objects without resolving deltas: each object's header
// says its inflated size (a delta's data starts with its result's size), which is
// checked against the limits before anything is inflated, and inflating stops at the
// declared size. The work is then bounded by the limits, whatever the pack claims.
// hashLen is the object id length in bytes (20 or 32).
func scanPack(r io.Reader, hashLen int, lim packLimits) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || !bytes.Equal(hdr[:4], []byte("PACK")) {
		return fmt.Errorf("%w: no pack after the header", errNotBundle)
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return fmt.Errorf("%w: pack version %d", errNotBundle, v)
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	if count > lim.maxObjects {
		return fmt.Errorf("%w: %d objects", errPackTooLarge, count)
	}
	var total int64
	for i := uint32(0); i < count; i++ {
		typ, size, err := objectHeader(br)
		if err != nil {
			return err
		}
		switch typ {
		case objCommit, objTree, objBlob, objTag:
		case objOfsDelta:
			if _, err := offsetVarint(br); err != nil {
				return err
			}
		case objRefDelta:
			if _, err := br.Discard(hashLen); err != nil {
				return fmt.Errorf("%w: cut short", errNotBundle)
			}
		default:
			return fmt.Errorf("%w: object type %d", errNotBundle, typ)
		}
		if size > lim.maxObject+deltaSlack(typ) {
			return errObjectTooLarge
		}
		result, err := inflateObject(br, typ, size)
		if err != nil {
			return err
		}
		if result > lim.maxObject {
			return errObjectTooLarge
		}
		total += result
		if typ == objOfsDelta || typ == objRefDelta {
			total += size // resolving a delta reads its data and writes its result
		}
		if total > lim.maxTotal {
			return errPackTooLarge
		}
	}
	return nil
}

// deltaSlack: a delta's own data may be a little longer than its result (instructions
// around inserted bytes).
func deltaSlack(typ int) int64 {
	if typ == objOfsDelta || typ == objRefDelta {
		return 64 << 10
	}
	return 0
}

// objectHeader reads an object's type and size (size bits 4, then 7 per byte).
func objectHeader(br *bufio.Reader) (typ int, size int64, err error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: cut short", errNotBundle)
	}
	typ, size = int(c>>4&7), int64(c&15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return 0, 0, fmt.Errorf("%w: an object size overflows", errNotBundle)
		}
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, fmt.Errorf("%w: cut short", errNotBundle)
		}
		size |= int64(c&0x7f) << shift
	}
	return typ, size, nil
}

// offsetVarint reads an OFS_DELTA's base offset.
func offsetVarint(br *bufio.Reader) (int64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, fmt.Errorf("%w: cut short", errNotBundle)
	}
	off := int64(c & 0x7f)
	for n := 0; c&0x80 != 0; n++ {
		if n > 8 {
			return 0, fmt.Errorf("%w: a delta offset overflows", errNotBundle)
		}
		if c, err = br.ReadByte(); err != nil {
			return 0, fmt.Errorf("%w: cut short", errNotBundle)
		}
		off = (off+1)<<7 | int64(c&0x7f)
	}
	return off, nil
}

// inflateObject inflates one object's zlib stream (bufio.Reader is a flate.Reader, so
// nothing past the stream is read) and returns the object's size once whole: size
// itself, or for a delta the result size its data starts with. A stream that is not
// exactly the declared size is refused, and inflating never goes past it.
func inflateObject(br *bufio.Reader, typ int, size int64) (int64, error) {
	zr, err := zlib.NewReader(br)
	if err != nil {
		return 0, fmt.Errorf("%w: a bad object stream", errNotBundle)
	}
	defer zr.Close()
	data := &countingReader{r: io.LimitReader(zr, size+1)}
	result := size
	var rest io.Reader = data
	if typ == objOfsDelta || typ == objRefDelta {
		dr := bufio.NewReaderSize(data, 16)
		if _, err := sizeVarint(dr); err != nil { // the base's size
			return 0, err
		}
		if result, err = sizeVarint(dr); err != nil {
			return 0, err
		}
		rest = dr
	}
	if _, err := io.Copy(io.Discard, rest); err != nil {
		return 0, fmt.Errorf("%w: a bad object stream", errNotBundle)
	}
	// The stream must end right at the declared size: one more read meets its end,
	// which checks its checksum and leaves the next object where it starts.
	if n, err := zr.Read(make([]byte, 1)); data.n != size || n != 0 || err != io.EOF {
		return 0, fmt.Errorf("%w: an object is not the size it declares", errNotBundle)
	}
	return result, nil
}

// countingReader counts what was read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// sizeVarint reads a delta's size (7 bits a byte, least significant first).
func sizeVarint(r io.ByteReader) (int64, error) {
	var v int64
	for shift := 0; ; shift += 7 {
		c, err := r.ReadByte()
		if err != nil || shift > 56 {
			return 0, fmt.Errorf("%w: a bad delta", errNotBundle)
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}
