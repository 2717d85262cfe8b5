package scripts_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fuzz.sh finds the module's fuzz targets without compiling anything (a compiler that
// always fails is set for the listing): every package's tests used to be compiled
// just to list them (1m 35s on two cores). It lists what the test files
// declare, read here with go/parser.
func TestFuzzListsEveryTargetWithoutCompiling(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("bash", "fuzz.sh", "--list")
	cmd.Env = append(os.Environ(), "GOFLAGS=-toolexec=/bin/false")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fuzz.sh --list with nothing able to compile: %v\n%s", err, stderr.String())
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := declaredFuzzTargets(t, "..")
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("expected the targets the test files declare\n%s\ngot\n%s", strings.Join(want, "\n"), out)
	}
}

// declaredFuzzTargets are "<import path> <name>" of every func FuzzX(*testing.F) in the
// module's test files below root, sorted.
func declaredFuzzTargets(t *testing.T, root string) []string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module, _, _ := strings.Cut(strings.TrimPrefix(string(mod), "module "), "\n")
	var targets []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || len(fn.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "F" {
					rel, _ := filepath.Rel(root, filepath.Dir(path))
					targets = append(targets, module+"/"+filepath.ToSlash(rel)+" "+fn.Name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(targets)
	return targets
}
