// Package layers holds the test that keeps the architecture's import rules true:
// core imports the standard library only; api and bots reach the domain through core.
package layers

import (
	"encoding/json"
	"go/ast"
	"os/exec"
	"strings"
	"testing"
)

type pkg struct {
	ImportPath   string
	Dir          string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Dir,Imports,TestImports,XTestImports", "github.com/wshub/wshub/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

const module = "github.com/wshub/wshub/"

func isStd(path string) bool { return !strings.Contains(strings.Split(path, "/")[0], ".") }

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("expected the module's packages, got %d", len(pkgs))
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			switch {
			case rel == "core":
				if !isStd(imp) {
					t.Errorf("core imports %s; core may import the standard library only", imp)
				}
			case rel == "jobs":
				// The background work is scheduled here and done by core.
				if strings.HasPrefix(imp, module) && imp != module+"core" {
					t.Errorf("jobs imports %s; jobs run work through core only", imp)
				}
			case rel == "internal/sse":
				// Shared by front-ends, so held to their rule: core only.
				if strings.HasPrefix(imp, module) && imp != module+"core" {
					t.Errorf("internal/sse imports %s; what front-ends share calls core only", imp)
				}
			case rel == "internal/httpfront":
				// The server front-ends mount on: it names errors in core's words only.
				if strings.HasPrefix(imp, module) && imp != module+"core" {
					t.Errorf("internal/httpfront imports %s; the hub's server knows core's error codes and no front-end", imp)
				}
			case rel == "internal/keyrate":
				// Shared by front-ends, and below core: nothing of the module.
				if strings.HasPrefix(imp, module) {
					t.Errorf("internal/keyrate imports %s; the front-ends' buckets need nothing of the hub", imp)
				}
			case rel == "api/runtimewire":
				if !isStd(imp) {
					t.Errorf("api/runtimewire imports %s; the runtime's wire uses the standard library only", imp)
				}
			case rel == "client":
				// The public client is what scripts import: nothing of the hub's inside.
				if !isStd(imp) && imp != module+"webhook" {
					t.Errorf("client imports %s; the client uses the standard library only", imp)
				}
			case rel == "api" || rel == "web" || strings.HasPrefix(rel, "bots/"):
				// bots/chat is the words and helpers the bots share above core.
				// api/runtimewire is the runtime API's wire, shared with `wshub runtime`.
				// internal/sse writes event streams for the API and the app alike, and
				// internal/keyrate holds their callers' token buckets, and
				// internal/httpfront is the server they declare themselves to.
				shared := strings.HasPrefix(rel, "bots/") && imp == module+"bots/chat" ||
					rel == "api" && imp == module+"api/runtimewire" ||
					(rel == "api" || rel == "web") && (imp == module+"internal/sse" || imp == module+"internal/keyrate" || imp == module+"internal/httpfront")
				if strings.HasPrefix(imp, module) && imp != module+"core" && !shared {
					t.Errorf("%s imports %s; front-ends call core only", rel, imp)
				}
				for _, banned := range []string{"github.com/jmoiron/sqlx", "github.com/lib/pq", "database/sql"} {
					if imp == banned {
						t.Errorf("%s imports %s; SQL lives in adapters/postgres", rel, imp)
					}
				}
			case strings.HasPrefix(rel, "adapters/") && !strings.HasPrefix(rel, "adapters/postgres"):
				if imp == "github.com/jmoiron/sqlx" || imp == "github.com/lib/pq" {
					t.Errorf("%s imports %s; SQL lives in adapters/postgres", rel, imp)
				}
			}
		}
	}
}

// core's own tests use nothing but the standard library and core: the domain is
// tested without a web framework (the store's tests live beside it). Its use cases'
// tests (package core_test) reach the store through internal/testkit/coretest alone, the
// harness that builds core on a real database without a hub.
func TestCoreTestsImportNothingOfTheHub(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.ImportPath != module+"core" {
			continue
		}
		for _, imp := range p.TestImports {
			if !isStd(imp) && imp != module+"core" {
				t.Errorf("core's tests import %s", imp)
			}
		}
		for _, imp := range p.XTestImports {
			if !isStd(imp) && imp != module+"core" && imp != module+"internal/testkit/coretest" {
				t.Errorf("core's use-case tests import %s; they build core through internal/testkit/coretest", imp)
			}
		}
	}
}

// The front-ends and jobs hold the core group they call (core.Workspaces, core.Chat,
// core.Worker...), not the whole core.Service: what a package can reach is what its
// fields say. Only the hub's wiring (and tests) hold the Service.
func TestFrontEndsHoldTheirGroupOnly(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if rel != "api" && rel != "web" && rel != "jobs" && !strings.HasPrefix(rel, "bots/") {
			continue
		}
		for f, file := range sources(t, p.Dir) {
			ast.Inspect(file, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Service" {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "core" {
						t.Errorf("%s names core.Service; hold the group it calls", f)
					}
				}
				return true
			})
		}
	}
}

// The hub's binary links client-go for core/v1 alone (adapters/kube/client.go): the
// clientset, its typed clients, the informer factory and k8s.io/client-go/kubernetes/scheme
// register every API group of Kubernetes when the hub starts, which was half the binary
// and a fifth of an idle hub's resident memory; gentype links the fake clientset.
func TestTheHubLinksTheCoreKubernetesGroupOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/wshub").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var core bool
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == "k8s.io/api/core/v1":
			core = true
		case strings.HasPrefix(dep, "k8s.io/api/"),
			dep == "k8s.io/client-go/kubernetes", strings.HasPrefix(dep, "k8s.io/client-go/kubernetes/"),
			dep == "k8s.io/client-go/informers", strings.HasPrefix(dep, "k8s.io/client-go/informers/"):
			t.Errorf("cmd/wshub links %s; the kubernetes provider uses core/v1 only, on a scheme of its own", dep)
		case dep == "k8s.io/client-go/gentype", dep == "k8s.io/client-go/testing":
			t.Errorf("cmd/wshub links %s, and with it client-go's fake clientset, server-side apply and OpenAPI models", dep)
		}
	}
	if !core {
		t.Error("cmd/wshub does not link k8s.io/api/core/v1: is the kubernetes provider still in the binary?")
	}
}
