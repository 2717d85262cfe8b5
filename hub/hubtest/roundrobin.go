package hubtest

import (
	"testing"

	"github.com/wshub/wshub/internal/balancer"
)

// NewRoundRobin starts a round-robin balancer on loopback with no targets yet
// (SetTargets), closed when t ends: hubs behind it as behind a load balancer, so a
// runtime behind it talks to every replica in turn.
func NewRoundRobin(t testing.TB) *balancer.Balancer {
	t.Helper()
	b, err := balancer.Start()
	if err != nil {
		t.Fatalf("balancer: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}
