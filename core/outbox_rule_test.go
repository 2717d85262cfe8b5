package core

import (
	"go/ast"
	"go/token"
	"testing"
)

// Every wake-up and every event-stream row is an effect of a change, written through
// the outbox (outbox.go) in the change's transaction: no other file of core calls the
// store's Notify or InsertTurnEvents itself.
func TestEffectsGoThroughTheOutbox(t *testing.T) {
	only := map[string]bool{"Notify": true, "InsertTurnEvents": true}
	coreMethodCalls(t, "outbox.go", func(pos token.Position, sel *ast.SelectorExpr, _ *ast.CallExpr) {
		if only[sel.Sel.Name] {
			t.Errorf("%s: %s is called outside the outbox: write it through effects (outbox.go)", pos, sel.Sel.Name)
		}
	})
}
