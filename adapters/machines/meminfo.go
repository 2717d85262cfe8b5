package machines

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

const meminfoPath = "/proc/meminfo"

// memTotalMiB reads MemTotal from a meminfo file ("MemTotal:  24538812 kB"), in MiB.
// It returns 0 when the file is missing or the line is absent or malformed.
func memTotalMiB(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 {
			return 0
		}
		return kb / 1024
	}
	return 0
}
