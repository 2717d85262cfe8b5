package main

import (
	"fmt"
	"strings"

	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/core"
)

// checkProviderOS says, before anything starts, whether a hub whose providers are
// these can run on goos (runtime.GOOS; an argument so that a test on Linux can ask for
// the others). The local and process providers run agents on this host, each in a
// bubblewrap sandbox with namespaces and a cgroup of its own: Linux only. On macOS the
// hub can still serve the kubernetes provider (its git, flock and O_NOFOLLOW are
// Unix's); on Windows nothing the hub does on its own disk is safe without O_NOFOLLOW,
// so it says where to run it instead. The client commands (ws, webhooks, version) need
// none of this and run everywhere.
func checkProviderOS(goos string, providers []string) error {
	if goos == "linux" {
		return nil
	}
	if len(providers) == 0 {
		providers = []string{core.LocalProviderID}
	}
	elsewhere := "run the hub in Docker instead: `docker compose up` with the repository's compose.yaml (README, \"On macOS or Windows\")"
	if goos == "windows" {
		return fmt.Errorf("the hub needs Linux or macOS, and this is windows: %s, or inside WSL2 (a Linux distribution on Windows), where it runs as on Linux", elsewhere)
	}
	for _, p := range providers {
		switch p = strings.TrimSpace(p); p {
		case core.LocalProviderID, machines.ProcessProviderID:
			return fmt.Errorf("the %s provider (WSHUB_PROVIDERS) runs agents on this host, which needs Linux (bubblewrap, namespaces, cgroups), and this is %s: %s, or set WSHUB_PROVIDERS=kubernetes to run workspaces in a Kubernetes cluster (docs/kubernetes.md)", p, goos, elsewhere)
		}
	}
	return nil
}
