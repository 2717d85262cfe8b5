package caches_test

import (
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
)

// manyFilesSetup fills deps with 3,000 files of 1 KiB (random: they do not compress)
// unless the cache brought them.
const manyFilesSetup = `set -e
if [ -f deps/f2999 ]; then
	echo hit > .setup-saw
else
	echo miss > .setup-saw
	mkdir -p deps
	head -c 3072000 /dev/urandom | split -b 1024 -d -a 4 - deps/f
fi
`

// BenchmarkCreateToReadyWithACacheOfThousandsOfFiles: create-to-ready of the workspace
// whose setup fills a cache of 3,000 files (cold_ms) and of those that restore it
// (ns/op and warm_ms), on each blob store.
func BenchmarkCreateToReadyWithACacheOfThousandsOfFiles(b *testing.B) {
	for _, blobs := range []string{hub.BlobsFile, hub.BlobsPostgres, hub.BlobsS3} {
		b.Run(blobs, func(b *testing.B) {
			h := startBare(b, blobs, 100<<20)
			commit(b, h.Project.Repository, map[string]string{".wshub/environment.json": environment(b, manyFilesSetup, []string{"deps"})})
			cold := newWorkspace(b, h, "")
			cold.expect(b, "miss", "saved 3,000 files (2.9 MiB")
			b.ResetTimer()
			var warm time.Duration
			for b.Loop() {
				w := newWorkspace(b, h, "")
				w.expect(b, "hit", "restored 3,000 files (2.9 MiB) from main")
				warm += w.elapsed
				b.Logf("%s %s", w.elapsed, w.output)
			}
			b.ReportMetric(float64(cold.elapsed.Milliseconds()), "cold_ms")
			b.ReportMetric(float64(warm.Milliseconds())/float64(b.N), "warm_ms")
		})
	}
}
