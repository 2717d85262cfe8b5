package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// A use case a key calls reads its workspace through accountWorkspace and its
// siblings, which leave out the projects the key does not reach: a store read by the
// caller's account id elsewhere would skip that filter.
func TestKeyCallersReadWorkspacesThroughTheProjectFilter(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	reads := map[string]bool{"GetWorkspace": true, "LockWorkspace": true, "ListWorkspaces": true}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "workspace_access.go" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !reads[sel.Sel.Name] {
				return true
			}
			// The store's form takes an account id; the use cases' take the *Account.
			if arg, ok := call.Args[1].(*ast.SelectorExpr); ok && arg.Sel.Name == "ID" {
				if x, ok := arg.X.(*ast.Ident); ok && x.Name == "acct" {
					t.Errorf("%s: %s(ctx, acct.ID, ...) reads past the key's projects; use accountWorkspace", name, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if checked < 50 {
		t.Fatalf("expected core's files read, found %d", checked)
	}
}
