//go:build linux

package sandbox

import (
	"context"
	"testing"

	"github.com/wshub/wshub/core"
)

// BenchmarkSandboxTurn is one trivial turn of a workspace (the sandbox alone: no hub,
// no git): "full" with its namespaces kept between turns and made per turn, and "none";
// back to back (the next turn's sandbox, prepared when a turn ends, is made in series
// with it), and "ready": the next turn comes once its sandbox is made, as a person's
// next message does: `go test ./adapters/sandbox -run '^$' -bench SandboxTurn -benchtime 50x`.
func BenchmarkSandboxTurn(b *testing.B) {
	for _, c := range []struct {
		name, network string
		kept          int
		ready         bool
	}{{"full/kept", core.NetworkFull, 0, false}, {"full/kept/ready", core.NetworkFull, 0, true}, {"full/per-turn", core.NetworkFull, -1, false},
		{"none", core.NetworkNone, 0, false}, {"none/ready", core.NetworkNone, 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			l := newHostLayout(b)
			r := newAgentHost(b, Options{StateDir: l.data + "/run", Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}, KeptNetworks: c.kept}},
				"cat >/dev/null; echo done")
			b.Cleanup(r.Close)
			for b.Loop() {
				if res := r.RunTurn(context.Background(), l.turn(c.network, "go")); !res.completed() {
					b.Fatalf("expected the turn to complete, got %+v", res)
				}
				if c.ready {
					b.StopTimer()
					waitMade(b, r.preparedFor(b, "ws_mine"))
					b.StartTimer()
				}
			}
		})
	}
}
