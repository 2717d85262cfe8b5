package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// scopes are the parameter types that say whose data a use case touches: an account
// (an API key), a chat session, place, button press or received event (verified by
// the bot with its platform), or a runtime's credentials. A method of a group that a
// front-end holds takes one of them, so a handler cannot act across tenants.
var scopes = map[string]bool{
	"*Account": true, "*ChatSession": true, "*ForgeSession": true, "ChatPlace": true, "ChatAction": true,
	"ChatArrival": true, "RuntimeCaller": true, "*AppSession": true,
}

// establishing are the methods that turn a credential into a scope, and so take none.
var establishing = map[string]bool{
	"Workspaces.Authenticate": true,
	// A person an identity provider vouched for, a session cookie's token, a one-time
	// sign-in link.
	"App.SignIn": true, "App.Session": true, "App.SignInWithLink": true,
}

// coreMethods maps each use-case group (a field of core.Service) to its exported
// methods' parameter types.
func coreMethods(t *testing.T, dir string) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	for _, file := range sources(t, dir) {
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := strings.TrimPrefix(typeString(fn.Recv.List[0].Type), "*")
			var params []string
			for _, p := range fn.Type.Params.List {
				params = append(params, typeString(p.Type))
			}
			if out[recv] == nil {
				out[recv] = map[string][]string{}
			}
			out[recv][fn.Name.Name] = params
		}
	}
	groups := serviceGroups(t, dir)
	for typ := range out {
		if !groups[typ] {
			delete(out, typ)
		}
	}
	if len(groups) < 5 || len(out) != len(groups) {
		t.Fatalf("core.Service's groups %v, found methods on %d of them", groups, len(out))
	}
	return out
}

// serviceGroups are the types of core.Service's fields.
func serviceGroups(t *testing.T, dir string) map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "service.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Service" {
			return true
		}
		for _, f := range ts.Type.(*ast.StructType).Fields.List {
			groups[strings.TrimPrefix(typeString(f.Type), "*")] = true
		}
		return false
	})
	return groups
}

// sources parses a package directory's non-test files, by path.
func sources(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	files := map[string]*ast.File{}
	for _, f := range names {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[f] = file
	}
	return files
}

func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + typeString(e.X)
	case *ast.SelectorExpr:
		return typeString(e.X) + "." + e.Sel.Name
	case *ast.ArrayType:
		return "[]" + typeString(e.Elt)
	}
	return "?"
}

// heldGroups lists the core types with methods that a front-end's source names.
func heldGroups(file *ast.File, methods map[string]map[string][]string) []string {
	var held []string
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "core" && methods[sel.Sel.Name] != nil {
				held = append(held, sel.Sel.Name)
			}
		}
		return true
	})
	return held
}

// unscopedReach says which unscoped methods the front-end sources can reach through
// the core groups they name.
func unscopedReach(t *testing.T, methods map[string]map[string][]string, files map[string]*ast.File) []string {
	var found []string
	seen := map[string]bool{}
	for name, file := range files {
		for _, group := range heldGroups(file, methods) {
			for m, params := range methods[group] {
				key := group + "." + m
				if seen[key] || establishing[key] || scoped(params) {
					continue
				}
				seen[key] = true
				found = append(found, name+" holds core."+group+", whose "+m+" takes no scope")
			}
		}
	}
	sort.Strings(found)
	return found
}

func scoped(params []string) bool {
	for _, p := range params {
		if scopes[p] {
			return true
		}
	}
	return false
}

func frontEndFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	files := map[string]*ast.File{}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if rel != "api" && rel != "web" && !strings.HasPrefix(rel, "bots/") {
			continue
		}
		for name, file := range sources(t, p.Dir) {
			files[rel+"/"+filepath.Base(name)] = file
		}
	}
	return files
}

func coreDir(t *testing.T) string {
	for _, p := range listPackages(t) {
		if p.ImportPath == module+"core" {
			return p.Dir
		}
	}
	t.Fatal("core not found")
	return ""
}

// The API and the bots reach only use cases that take the caller's scope: the
// operator's and the background jobs' (unscoped) methods sit in groups they cannot
// hold.
func TestFrontEndsReachOnlyScopedUseCases(t *testing.T) {
	methods := coreMethods(t, coreDir(t))
	files := frontEndFiles(t)
	for _, problem := range unscopedReach(t, methods, files) {
		t.Error(problem)
	}
	// The check sees what it must: the front-ends hold the groups they call.
	held := map[string]bool{}
	for _, f := range files {
		for _, g := range heldGroups(f, methods) {
			held[g] = true
		}
	}
	for _, g := range []string{"Workspaces", "Webhooks", "RuntimeAPI", "Chat", "App", "AppProjects"} {
		if !held[g] {
			t.Errorf("no front-end holds core.%s: the check would not look at its methods", g)
		}
	}
}

// A handler that reached for an operator's action is caught.
func TestScopeCheckCatchesAPlantedUnscopedCall(t *testing.T) {
	methods := coreMethods(t, coreDir(t))
	files := frontEndFiles(t)
	planted, err := parser.ParseFile(token.NewFileSet(), "planted.go", `package api
import "github.com/wshub/wshub/core"
type planted struct{ admin *core.Admin }
func (p planted) drop(id string) { p.admin.DeleteWorkspace(nil, id) }
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	files["api/planted.go"] = planted
	problems := unscopedReach(t, methods, files)
	var caught bool
	for _, p := range problems {
		caught = caught || strings.HasPrefix(p, "api/planted.go holds core.Admin, whose DeleteWorkspace")
	}
	if !caught {
		t.Fatalf("the planted call was not reported; got %q", problems)
	}
}

// maxGroupMethods bounds a use-case group: past it, a group is doing several jobs and
// should be split by who calls it.
const maxGroupMethods = 30

// No core group carries more than maxGroupMethods methods, exported or not.
func TestCoreGroupsStaySmall(t *testing.T) {
	dir := coreDir(t)
	groups := serviceGroups(t, dir)
	count := map[string]int{}
	for _, file := range sources(t, dir) {
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
				count[strings.TrimPrefix(typeString(fn.Recv.List[0].Type), "*")]++
			}
		}
	}
	for g := range groups {
		if count[g] == 0 || count[g] > maxGroupMethods {
			t.Errorf("core.%s has %d methods; a group has 1 to %d", g, count[g], maxGroupMethods)
		}
	}
}
