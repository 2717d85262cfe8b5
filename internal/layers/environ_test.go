package layers

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The wshub command reads the process's environment in one place, main's
// (processEnviron in cmd/wshub/env.go, and take, which unsets a credential it hands
// over); every command reads the environ it is given. So its tests give each command
// an environment of their own and run in parallel: a test that changes the process's
// environment or working directory (t.Setenv, os.Setenv, t.Chdir), which keeps it
// from running in parallel, says why on its line or the line above, in a comment
// starting "// setenv:".
func TestTheCommandReadsTheEnvironmentItIsGiven(t *testing.T) {
	var dir string
	for _, p := range listPackages(t) {
		if p.ImportPath == module+"cmd/wshub" {
			dir = p.Dir
		}
	}
	if dir == "" {
		t.Fatal("expected the package cmd/wshub")
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var tests int
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			tests++
		}
		for _, problem := range problemsIn(t, name, nil, "cmd/wshub/"+filepath.Base(name), environProblems) {
			t.Error(problem)
		}
	}
	if tests < 10 {
		t.Fatalf("expected cmd/wshub's test files, read %d", tests)
	}
}

// Each way of reaching the process's environment is caught where it is not allowed,
// and let through where it is.
func TestEnvironCheckCatchesPlantedReads(t *testing.T) {
	const src = `package main
func serve() { _ = os.Getenv("WSHUB_ADDR") }
func dev() { _, _ = os.LookupEnv("WSHUB_ADDR"); _ = os.Environ() }
func runtimeToken() { os.Unsetenv("WSHUB_RUNTIME_TOKEN") }
func processEnviron() environ { return environ{vars: varsOf(os.Environ())} }
func (e environ) take(name string) string { _ = os.Unsetenv(name); return "" }
`
	const tests = `package main
func TestA(t *testing.T) { t.Setenv("DATABASE_URL", "") }
func TestB(t *testing.T) { t.Setenv("HOME", t.TempDir()) // setenv: the home git reads
}
func TestC(t *testing.T) {
	// setenv: the process's working directory is the point
	t.Chdir(t.TempDir())
	os.Setenv("X", "1")
}
func TestD(t *testing.T) { env := testEnviron("X=1"); _ = env.get("X") }
`
	var got []string
	for name, src := range map[string]string{"cmd/wshub/env.go": src, "cmd/wshub/planted_test.go": tests} {
		got = append(got, problemsIn(t, name, src, name, environProblems)...)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"cmd/wshub/env.go:2: os.Getenv", "cmd/wshub/env.go:3: os.LookupEnv", "cmd/wshub/env.go:3: os.Environ",
		"cmd/wshub/env.go:4: os.Unsetenv", "cmd/wshub/planted_test.go:2: t.Setenv", "cmd/wshub/planted_test.go:8: os.Setenv"} {
		if !strings.Contains(all, want) {
			t.Errorf("expected %q among the problems, got:\n%s", want, all)
		}
	}
	if len(got) != 6 {
		t.Errorf("expected main's one place, the reasoned t.Setenv and t.Chdir, and the test's own environ let through, got:\n%s", all)
	}
}

// readsProcess reports whether os.<fn> reads or changes the process's environment.
func readsProcess(fn string) bool {
	switch fn {
	case "Getenv", "LookupEnv", "Environ", "ExpandEnv", "Setenv", "Unsetenv", "Clearenv":
		return true
	}
	return false
}

// changesProcess reports whether <recv>.<fn> in a test changes the process's
// environment or working directory: t.Setenv, t.Chdir, os.Setenv and the like.
// Reading it does not keep a test from running in parallel.
func changesProcess(recv, fn string) bool {
	if recv == "os" {
		return fn == "Setenv" || fn == "Unsetenv" || fn == "Clearenv" || fn == "Chdir"
	}
	return fn == "Setenv" || fn == "Chdir"
}

// environProblems lists f's reaches into the process's environment: in a test, a
// t.Setenv, t.Chdir or os.Setenv (and the like) without a "// setenv:" reason on its
// line or the line above; elsewhere, any os environment call outside main's one place
// (env.go's processEnviron and environ.take).
func environProblems(fset *token.FileSet, f *ast.File, name string) []string {
	test := strings.HasSuffix(name, "_test.go")
	reasoned := map[int]bool{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "// setenv:") {
				line := fset.Position(c.Pos()).Line
				reasoned[line], reasoned[line+1] = true, true
			}
		}
	}
	var problems []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		allowed := !test && filepath.Base(name) == "env.go" && ok && (fn.Name.Name == "processEnviron" || fn.Name.Name == "take")
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			recv, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			line := fset.Position(call.Pos()).Line
			what := recv.Name + "." + sel.Sel.Name
			switch {
			case test && changesProcess(recv.Name, sel.Sel.Name) && !reasoned[line]:
				problems = append(problems, fmt.Sprintf("%s:%d: %s without a \"// setenv:\" reason: give the command an environ of its own (testEnviron), so the test runs in parallel", name, line, what))
			case !test && recv.Name == "os" && readsProcess(sel.Sel.Name) && !allowed:
				problems = append(problems, fmt.Sprintf("%s:%d: %s: a command reads the environ it is given (run's env), not the process's", name, line, what))
			}
			return true
		})
	}
	return problems
}
