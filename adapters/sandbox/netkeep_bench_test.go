//go:build linux

package sandbox

import (
	"context"
	"testing"

	"github.com/wshub/wshub/core"
)

// BenchmarkSandboxTurn is one trivial turn of a workspace (the sandbox alone: no hub,
// no git): "full" with its namespaces kept between turns and made per turn, and "none":
// `go test ./adapters/sandbox -run '^$' -bench SandboxTurn -benchtime 50x`.
func BenchmarkSandboxTurn(b *testing.B) {
	for _, c := range []struct {
		name, network string
		kept          int
	}{{"full/kept", core.NetworkFull, 0}, {"full/per-turn", core.NetworkFull, -1}, {"none", core.NetworkNone, 0}} {
		b.Run(c.name, func(b *testing.B) {
			l := newHostLayout(b)
			r := newAgentHost(b, Options{StateDir: l.data + "/run", Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}, KeptNetworks: c.kept}},
				"cat >/dev/null; echo done")
			b.Cleanup(r.Close)
			for b.Loop() {
				if res := r.RunTurn(context.Background(), l.turn(c.network, "go")); !res.completed() {
					b.Fatalf("expected the turn to complete, got %+v", res)
				}
			}
		})
	}
}
