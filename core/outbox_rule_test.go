package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every wake-up and every event-stream row is an effect of a change, written through
// the outbox (outbox.go) in the change's transaction: no other file of core calls the
// store's Notify or InsertTurnEvents itself.
func TestEffectsGoThroughTheOutbox(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	only := map[string]bool{"Notify": true, "InsertTurnEvents": true}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "outbox.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && only[sel.Sel.Name] {
				t.Errorf("%s: %s is called outside the outbox: write it through effects (outbox.go)", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
