package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// binaryFigures is the hub binary's size and what it links (packages, and the modules
// they come from), so that growth shows from one run to the next.
func binaryFigures(hubBin string) string {
	out := "Hub binary: "
	if st, err := os.Stat(hubBin); err == nil {
		out += fmt.Sprintf("%.1f MiB", float64(st.Size())/(1<<20))
	} else {
		out += "size unknown (" + err.Error() + ")"
	}
	pkgs, err := exec.Command("go", "list", "-deps", "-f", "{{if .Standard}}std{{else}}{{with .Module}}{{.Path}}{{end}}{{end}}",
		"github.com/wshub/wshub/cmd/wshub").Output()
	if err != nil {
		return out + "; packages unknown (go list: " + err.Error() + ")."
	}
	std, total := 0, 0
	modules := map[string]bool{}
	for _, line := range strings.Fields(string(pkgs)) {
		total++
		if line == "std" {
			std++
			continue
		}
		modules[line] = true
	}
	return out + fmt.Sprintf(", %d packages linked (`go list -deps ./cmd/wshub`, from the source beside it): %d of the standard library, %d from %d modules (the hub's own included).",
		total, std, total-std, len(modules))
}
