package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// problemsIn parses the Go file name (src its text, nil to read the file) and returns
// what check finds in it, each problem naming the file as rel.
func problemsIn(t *testing.T, name string, src any, rel string, check func(*token.FileSet, *ast.File, string) []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return check(fset, f, rel)
}
