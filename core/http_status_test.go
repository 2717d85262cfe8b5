package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Every wire code core defines has its HTTP status: a code added to errors.go
// and returned by a handler would otherwise answer 500. The chat-only codes (chat_*)
// never reach the wire.
func TestEveryCoreCodeHasAnHTTPStatus(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		spec, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if !strings.HasPrefix(name.Name, "Code") || i >= len(spec.Values) {
				continue
			}
			lit, ok := spec.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			code, _ := strconv.Unquote(lit.Value)
			n++
			if _, ok := HTTPStatus(code); !ok && !strings.HasPrefix(code, "chat_") { // chat-only: never on the wire
				t.Errorf("core.%s (%q) has no HTTP status in httpStatus", name.Name, code)
			}
		}
		return true
	})
	if n < 40 {
		t.Fatalf("expected core/errors.go's codes read, found %d", n)
	}
}
