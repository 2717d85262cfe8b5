package layers

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// A test waits for the event itself (internal/testkit/eventually, a channel, a row), not
// for a fixed time: every time.Sleep left in a test says on its line, in a comment
// starting "// sleep:", why the time is the point (an outage's length, a rate limit's
// window, fake time under testing/synctest). And no test hand-rolls a deadline loop;
// the one helper polls. Only the helper itself keeps a loop of its own.
func TestTestsWaitForEventsNotTime(t *testing.T) {
	helper := module + "internal/testkit/eventually"
	files := 0
	for _, p := range listPackages(t) {
		if p.ImportPath == helper {
			continue
		}
		names, err := filepath.Glob(filepath.Join(p.Dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			files++
			rel := strings.TrimPrefix(p.ImportPath, module) + "/" + filepath.Base(name)
			for _, problem := range problemsIn(t, name, nil, rel, waitProblems) {
				t.Error(problem)
			}
		}
	}
	if files < 100 {
		t.Fatalf("expected the module's test files, read %d", files)
	}
}

// A bare sleep and each shape of hand-rolled deadline loop are caught; a sleep with
// its reason and a poll through the helper are not.
func TestWaitCheckCatchesPlantedWaits(t *testing.T) {
	const src = `package planted
func a() { time.Sleep(time.Second) }
func b() { time.Sleep(time.Second) // sleep: the outage's length
}
func c() {
	for deadline := time.Now().Add(time.Minute); !done(); time.Sleep(10) {
	}
}
func d() {
	for time.Now().Before(deadline) {
		poll()
	}
}
func e() {
	for {
		if time.Now().After(deadline) {
			fail()
		}
	}
}
func f() { eventually.Eventually(t, time.Minute, "done", done) }
`
	got := strings.Join(problemsIn(t, "planted_test.go", src, "planted_test.go", waitProblems), "\n")
	for _, want := range []string{"planted_test.go:2: time.Sleep", "planted_test.go:6: a deadline loop",
		"planted_test.go:6: time.Sleep", "planted_test.go:10: a deadline loop", "planted_test.go:15: a deadline loop"} {
		if !strings.Contains(got, want) {
			t.Errorf("expected %q among the problems, got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "planted_test.go:3:") || strings.Contains(got, "planted_test.go:21:") {
		t.Errorf("expected the reasoned sleep and the helper's poll let through, got:\n%s", got)
	}
}

// waitProblems lists f's sleeps without a "// sleep:" reason on their line and its
// deadline loops: a for whose init, condition or post reads the clock, or whose body
// checks the clock in an if of its own.
func waitProblems(fset *token.FileSet, f *ast.File, name string) []string {
	reasoned := map[int]bool{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "// sleep:") {
				reasoned[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	var problems []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if line := fset.Position(n.Pos()).Line; timeCall(n, "Sleep") && !reasoned[line] {
				problems = append(problems, fmt.Sprintf("%s:%d: time.Sleep without a \"// sleep:\" reason on its line: wait for the event (internal/testkit/eventually)", name, line))
			}
		case *ast.ForStmt:
			if readsClock(n.Init) || readsClock(n.Cond) || readsClock(n.Post) || checksClock(n.Body) {
				problems = append(problems, fmt.Sprintf("%s:%d: a deadline loop: poll with internal/testkit/eventually", name, fset.Position(n.Pos()).Line))
			}
		}
		return true
	})
	return problems
}

// timeCall reports whether call is time.<fn>(...).
func timeCall(call *ast.CallExpr, fn string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != fn {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "time"
}

// readsClock reports whether n calls time.Now, time.Since or time.Until, outside any
// function literal in it.
func readsClock(n ast.Node) bool {
	if n == nil {
		return false
	}
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			found = found || timeCall(n, "Now") || timeCall(n, "Since") || timeCall(n, "Until")
		}
		return !found
	})
	return found
}

// checksClock reports whether one of body's own statements is an if on the clock.
func checksClock(body *ast.BlockStmt) bool {
	for _, s := range body.List {
		if is, ok := s.(*ast.IfStmt); ok && readsClock(is.Cond) {
			return true
		}
	}
	return false
}
