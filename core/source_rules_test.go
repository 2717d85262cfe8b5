package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// coreMethodCalls calls fn on every method call in core's files (tests and skip left
// out), for the rules that hold a store call to one file; it returns the files read.
func coreMethodCalls(t *testing.T, skip string, fn func(pos token.Position, sel *ast.SelectorExpr, call *ast.CallExpr)) int {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	read := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == skip {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		read++
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					fn(fset.Position(call.Pos()), sel, call)
				}
			}
			return true
		})
	}
	return read
}
