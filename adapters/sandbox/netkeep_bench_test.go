//go:build linux

package sandbox

import (
	"context"
	"testing"

	"github.com/wshub/wshub/core"
)

// BenchmarkSandboxTurn is one trivial turn of a workspace (the sandbox alone: no hub,
// no git), each network with its namespaces kept between turns and made per turn:
// `go test ./adapters/sandbox -run '^$' -bench SandboxTurn -benchtime 50x`.
func BenchmarkSandboxTurn(b *testing.B) {
	for _, network := range []string{core.NetworkFull, core.NetworkNone} {
		for _, kept := range []struct {
			name string
			max  int
		}{{"kept", 0}, {"per-turn", -1}} {
			b.Run(network+"/"+kept.name, func(b *testing.B) {
				l := newHostLayout(b)
				r := newAgentHost(b, Options{StateDir: l.data + "/run", Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}, KeptNetworks: kept.max}},
					"cat >/dev/null; echo done")
				b.Cleanup(r.Close)
				for b.Loop() {
					if res := r.RunTurn(context.Background(), l.turn(network, "go")); !res.completed() {
						b.Fatalf("expected the turn to complete, got %+v", res)
					}
				}
			})
		}
	}
}
