package core

import (
	"go/ast"
	"go/token"
	"testing"
)

// A use case a key calls reads its workspace through accountWorkspace and its
// siblings, which leave out the projects the key does not reach: a store read by the
// caller's account id elsewhere would skip that filter.
func TestKeyCallersReadWorkspacesThroughTheProjectFilter(t *testing.T) {
	reads := map[string]bool{"GetWorkspace": true, "LockWorkspace": true, "ListWorkspaces": true}
	read := coreMethodCalls(t, "workspace_access.go", func(pos token.Position, sel *ast.SelectorExpr, call *ast.CallExpr) {
		if !reads[sel.Sel.Name] || len(call.Args) < 2 {
			return
		}
		// The store's form takes an account id; the use cases' take the *Account.
		if arg, ok := call.Args[1].(*ast.SelectorExpr); ok && arg.Sel.Name == "ID" {
			if x, ok := arg.X.(*ast.Ident); ok && x.Name == "acct" {
				t.Errorf("%s: %s(ctx, acct.ID, ...) reads past the key's projects; use accountWorkspace", pos, sel.Sel.Name)
			}
		}
	})
	if read < 50 {
		t.Fatalf("expected core's files read, found %d", read)
	}
}
