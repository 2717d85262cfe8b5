package layers

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/architecture.md is the one package map: every package of the module is named
// in it by its path (in backticks, e.g. `adapters/gitrepo` or `core/`), so a package
// added without a place on the map fails here.
func TestTheArchitectureMapNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z0-9_./-]+)`").FindAllStringSubmatch(string(doc), -1) {
		named[strings.TrimSuffix(m[1], "/")] = true
	}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, strings.TrimSuffix(module, "/")), "/")
		if rel == "" {
			continue
		}
		if !named[rel] {
			t.Errorf("docs/architecture.md does not name the package %s: give it a row (or a place in one) in the package map", rel)
		}
	}
}

// The test engines and fakes live under internal/testkit, and only tests (and other
// test engines) use them: the hub's own code never links a fake. hub/hubtest, the hub
// the tests (and wshub-bench) start, waits through the tests' one wait.
func TestOnlyTestsUseTheTestKit(t *testing.T) {
	kit, hubtest := module+"internal/testkit/", module+"hub/hubtest"
	for _, p := range listPackages(t) {
		if strings.HasPrefix(p.ImportPath+"/", kit) {
			continue
		}
		for _, imp := range p.Imports {
			if p.ImportPath == hubtest && imp == kit+"eventually" {
				continue
			}
			if strings.HasPrefix(imp, kit) {
				t.Errorf("%s imports %s outside its tests; internal/testkit holds test engines only", p.ImportPath, imp)
			}
		}
	}
}
