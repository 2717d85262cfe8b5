package gitrepo

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"io/fs"
	"sync"
	"time"
)

// CleanTrees remembers, for each checkout, what its files were when git status last
// found nothing to commit in it: a turn that changed nothing (an answer, a question)
// then needs no git at all, where status cost a process start and the index's read.
// What is remembered is a keyed hash of every path under the checkout, .git included,
// with each file's and symlink's inode, size, mode and change and modification times:
// a write, a new or removed file, a `git add` or a ref moved changes it. The zero
// value is ready; a nil *CleanTrees remembers nothing.
type CleanTrees struct {
	// Window is racyWindow when 0.
	Window time.Duration

	mu   sync.Mutex
	seed maphash.Seed
	sums map[string]uint64
}

// maxCleanTrees bounds what is remembered: past it, everything is forgotten (and each
// checkout's next commit asks status again).
const maxCleanTrees = 100_000

// racyWindow is how far before a walk's start a change time makes its snapshot not
// worth keeping: a file changed again within the file system's time granularity after
// the walk could show the same times (git's "racy" entries). Turns do not come that
// close after their commit; a snapshot taken right after a change is simply not kept.
const racyWindow = 100 * time.Millisecond

func (t *CleanTrees) init() {
	if t.sums == nil {
		t.seed, t.sums = maphash.MakeSeed(), map[string]uint64{}
	}
}

// newTreeSum starts the sum of one walk of dir.
func (t *CleanTrees) newTreeSum() *treeSum {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	t.init()
	seed := t.seed
	t.mu.Unlock()
	s := &treeSum{start: time.Now(), window: cmp.Or(t.Window, racyWindow)}
	s.h.SetSeed(seed)
	return s
}

// clean reports whether dir's files are what they were when status last found
// nothing to commit there.
func (t *CleanTrees) clean(dir string, s *treeSum) bool {
	if t == nil || s == nil || s.racy() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	sum, ok := t.sums[dir]
	return ok && sum == s.h.Sum64()
}

// keep remembers s as dir's clean state, unless it is too close to a change to trust.
func (t *CleanTrees) keep(dir string, s *treeSum) {
	if t == nil || s == nil || s.racy() {
		t.Forget(dir)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	if len(t.sums) >= maxCleanTrees {
		clear(t.sums)
	}
	t.sums[dir] = s.h.Sum64()
}

// Forget drops what is remembered of dir.
func (t *CleanTrees) Forget(dir string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sums, dir)
}

// treeSum is the hash of one walk of a checkout (scanCheckout), and the latest change
// time it saw.
type treeSum struct {
	h      maphash.Hash
	start  time.Time
	window time.Duration
	latest time.Time
	buf    [8]byte
}

func (s *treeSum) racy() bool { return !s.latest.Before(s.start.Add(-s.window)) }

// add hashes one entry of the walk: its path and type, and for a file or a symlink
// what stat says of it (fi, nil when it could not be read).
func (s *treeSum) add(path string, d fs.DirEntry, fi fs.FileInfo) {
	if s == nil {
		return
	}
	s.h.WriteString(path)
	s.h.WriteByte(0)
	s.u64(uint64(d.Type()))
	if fi == nil {
		return
	}
	id := statID(fi)
	for _, v := range []uint64{uint64(fi.Size()), uint64(fi.Mode()), id.ino, uint64(id.mtime), uint64(id.ctime)} {
		s.u64(v)
	}
	if c := time.Unix(0, id.ctime); c.After(s.latest) {
		s.latest = c
	}
	if m := time.Unix(0, id.mtime); m.After(s.latest) {
		s.latest = m
	}
}

// mix hashes what else the commit's answer depends on (what is left and kept out).
func (s *treeSum) mix(parts ...string) {
	if s == nil {
		return
	}
	for _, p := range parts {
		s.h.WriteString(p)
		s.h.WriteByte(0)
	}
}

func (s *treeSum) u64(v uint64) {
	binary.LittleEndian.PutUint64(s.buf[:], v)
	s.h.Write(s.buf[:])
}

// fileStat is what stat says identifies a version of a file (statID).
type fileStat struct {
	ino          uint64
	mtime, ctime int64
}

// unknownStat is a file whose version cannot be told: changed now, so never trusted.
func unknownStat() fileStat {
	now := time.Now().UnixNano()
	return fileStat{mtime: now, ctime: now}
}
