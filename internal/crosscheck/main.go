// Command crosscheck type-checks the module for another operating system from source,
// without compiling it: `go list -deps -json` with GOOS and GOARCH set names every
// package and file that system's build would use, and go/types checks them in
// dependency order, the module's packages in full and every dependency's declarations
// only (their bodies were checked by their authors, and are what makes a compile of the
// whole graph cost minutes on a cold cache; this takes seconds). A Linux-only call left
// outside its build tag fails here as it would in a build on that system.
//
//	GOOS=darwin GOARCH=arm64 go run ./internal/crosscheck ./...
//
// It exits 1 listing the errors, 2 on a usage or go list failure.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// listed is what go list says of a package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	ImportMap  map[string]string
	Standard   bool
	DepOnly    bool
	Error      *struct{ Err string }
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: GOOS=os GOARCH=arch crosscheck packages...")
		os.Exit(2)
	}
	pkgs, err := list(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "crosscheck:", err)
		os.Exit(2)
	}
	target := os.Getenv("GOOS") + "/" + os.Getenv("GOARCH")
	if errs := check(pkgs, target); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, e)
		}
		os.Exit(1)
	}
}

// list runs go list in the environment it was given (GOOS, GOARCH, CGO_ENABLED).
func list(patterns []string) ([]*listed, error) {
	args := append([]string{"list", "-deps", "-e", "-json=ImportPath,Dir,GoFiles,Imports,ImportMap,Standard,DepOnly,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.Bytes())
	}
	var pkgs []*listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listed)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// loaded is a package being checked: done closes when types is set (nil on failure).
type loaded struct {
	*listed
	done  chan struct{}
	types *types.Package
}

// check type-checks every package once its imports are, as many at a time as there are
// processors, and returns the errors found, sorted.
func check(pkgs []*listed, target string) []string {
	byPath := make(map[string]*loaded, len(pkgs))
	for _, p := range pkgs {
		byPath[p.ImportPath] = &loaded{listed: p, done: make(chan struct{})}
	}
	var (
		mu   sync.Mutex
		errs []string
		wg   sync.WaitGroup
		sem  = make(chan struct{}, runtime.GOMAXPROCS(0))
		fset = token.NewFileSet()
	)
	report := func(format string, a ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	for _, l := range byPath {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(l.done)
			for _, imp := range l.Imports {
				if d := byPath[imp]; d != nil {
					<-d.done
				}
			}
			sem <- struct{}{}
			defer func() { <-sem }()
			if l.Error != nil {
				report("%s: %s", target, strings.TrimSpace(l.Error.Err))
				return
			}
			l.types = checkOne(fset, l, byPath, func(err error) {
				report("%s: %v", target, err)
			})
		}()
	}
	wg.Wait()
	sort.Strings(errs)
	return errs
}

// checkOne parses and checks one package; a dependency's function bodies are skipped.
func checkOne(fset *token.FileSet, l *loaded, byPath map[string]*loaded, fail func(error)) *types.Package {
	if l.ImportPath == "unsafe" {
		return types.Unsafe
	}
	own := !l.Standard && !l.DepOnly
	mode := parser.SkipObjectResolution
	if own {
		mode |= parser.ParseComments // for go:build lines in error positions, and cgo
	}
	files := make([]*ast.File, 0, len(l.GoFiles))
	for _, name := range l.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, mode)
		if err != nil {
			fail(err)
			return nil
		}
		files = append(files, f)
	}
	var first error
	conf := types.Config{
		Importer:         importer{from: l, byPath: byPath},
		IgnoreFuncBodies: !own,
		FakeImportC:      true,
		Sizes:            types.SizesFor("gc", os.Getenv("GOARCH")),
		Error: func(err error) {
			if first == nil || own {
				fail(err)
			}
			if first == nil {
				first = err
			}
		},
	}
	pkg, _ := conf.Check(l.ImportPath, fset, files, nil)
	return pkg
}

// importer resolves a package's imports through its import map to checked packages.
type importer struct {
	from   *loaded
	byPath map[string]*loaded
}

func (im importer) Import(path string) (*types.Package, error) {
	if mapped, ok := im.from.ImportMap[path]; ok {
		path = mapped
	}
	d := im.byPath[path]
	if d == nil || d.types == nil {
		return nil, fmt.Errorf("%s: import %q could not be checked", im.from.ImportPath, path)
	}
	return d.types, nil
}
