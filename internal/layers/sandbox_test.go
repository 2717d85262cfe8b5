package layers

import (
	"slices"
	"strings"
	"testing"
)

// The sandbox (adapters/sandbox: bubblewrap, network namespaces and pasta, egress
// rules, cgroups, strays) is apart from the agent CLIs' protocols (adapters/agents):
// the runner imports the sandbox, never the other way round, not even in the
// sandbox's tests; and the libraries that confine a process (cgroups, netlink,
// systemd's bus) are the sandbox's alone, so that no sandbox grows in adapters/agents
// again.

// confiningLibraries are the import paths (prefixes) only the sandbox uses.
var confiningLibraries = []string{
	"github.com/containerd/cgroups/", "github.com/opencontainers/runtime-spec/", "github.com/vishvananda/",
	"github.com/coreos/go-systemd/", "github.com/godbus/dbus/",
}

// sandboxProblems says where pkgs break the rule, one sentence each.
func sandboxProblems(pkgs []pkg) []string {
	var problems []string
	sandbox := false
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.ImportPath, module)
		imports := append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...)
		slices.Sort(imports)
		imports = slices.Compact(imports)
		switch rel {
		case "adapters/sandbox":
			sandbox = true
			for _, imp := range imports {
				if imp == module+"adapters/agents" || strings.HasPrefix(imp, module+"adapters/agents/") {
					problems = append(problems, "adapters/sandbox imports "+imp+"; the runner uses the sandbox, never the other way round")
				}
			}
		case "adapters/agents":
			for _, imp := range imports {
				for _, lib := range confiningLibraries {
					if strings.HasPrefix(imp, lib) {
						problems = append(problems, "adapters/agents imports "+imp+"; confining a process is adapters/sandbox's")
					}
				}
			}
		}
	}
	if !sandbox {
		problems = append(problems, "there is no adapters/sandbox: the sandbox has a package of its own, apart from the agents' CLIs")
	}
	return problems
}

func TestTheSandboxIsApartFromTheAgents(t *testing.T) {
	for _, p := range sandboxProblems(listPackages(t)) {
		t.Error(p)
	}
}

// The check reports a sandbox that imports the agents, an agents package that
// confines processes itself, and a module without the sandbox's package.
func TestSandboxCheckCatchesPlantedImports(t *testing.T) {
	planted := []pkg{
		{ImportPath: module + "adapters/sandbox", Imports: []string{module + "core"}, XTestImports: []string{module + "adapters/agents"}},
		{ImportPath: module + "adapters/agents", Imports: []string{module + "adapters/sandbox", "github.com/containerd/cgroups/v3/cgroup1"}},
	}
	got := strings.Join(sandboxProblems(planted), "\n")
	for _, want := range []string{
		"adapters/sandbox imports " + module + "adapters/agents",
		"adapters/agents imports github.com/containerd/cgroups/v3/cgroup1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("expected the planted import reported (%q), got:\n%s", want, got)
		}
	}
	if got := sandboxProblems(planted[1:]); len(got) != 2 || !strings.Contains(got[1], "there is no adapters/sandbox") {
		t.Errorf("expected a module without adapters/sandbox reported, got %q", got)
	}
}
