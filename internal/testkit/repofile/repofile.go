// Package repofile finds a file of this repository from a test: go test runs in the
// package's directory, and the pinned versions live in scripts/ at the module's root.
package repofile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Path is rel (slash-separated) under the module's root, found by walking up from the
// working directory to the first go.mod.
func Path(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(rel)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
