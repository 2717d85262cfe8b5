package gitrepo

import (
	"io/fs"
	"syscall"
)

// statID is what stat says identifies a version of a file: its inode and its
// modification and change times (nanoseconds).
func statID(fi fs.FileInfo) fileStat {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return unknownStat()
	}
	return fileStat{ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}
