#!/usr/bin/env bash
# Runs every Fuzz* target in every package for $FUZZTIME (default 4s), so new targets are
# picked up automatically. They are found without compiling anything: grep names the
# packages whose test files declare a `func Fuzz`, `go list` says which of those files
# this platform builds (build tags), and the targets are read from them (`go test -list`
# on every package compiled all their tests first). A run that fails with the engine's
# own "context deadline exceeded" and no failing input (a known flake of Go's fuzzing
# coordinator at the time limit) is run again; a real failure (an input written to
# testdata/fuzz) fails at once. Up to 3 attempts: the engine's timeout was seen twice in
# a row on a loaded machine.
#
#   FUZZTIME=30s bash scripts/fuzz.sh      # make fuzz; make test runs it for 4s each
#   bash scripts/fuzz.sh --list            # only lists the targets (package name)
set -euo pipefail

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-4s}
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# dirs: the packages with a test file that declares a fuzz target, as ./relative paths.
dirs=$({ grep -rlE --include='*_test.go' --exclude-dir=.data --exclude-dir=.git --exclude-dir=testdata \
	'^func Fuzz[[:alnum:]_]*\(' . || true; } | xargs -r -n1 dirname | sort -u)
found=0
for dir in $dirs; do
	pkg=$("$GO" list -f '{{.ImportPath}}' "$dir")
	files=$("$GO" list -f '{{range .TestGoFiles}}{{$.Dir}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$.Dir}}/{{.}} {{end}}' "$dir")
	# shellcheck disable=SC2086 # files is a list of paths without spaces (Go file names)
	names=$(sed -nE 's/^func (Fuzz[[:alnum:]_]*)\(.*/\1/p' $files | sort)
	for name in $names; do
		found=$((found + 1))
		if [[ ${1:-} == --list ]]; then
			echo "$pkg $name"
			continue
		fi
		echo "==> fuzz $pkg $name ($FUZZTIME)"
		for attempt in 1 2 3; do
			if out=$("$GO" test -run='^$' -fuzz="^$name\$" -fuzztime="$FUZZTIME" -fuzzminimizetime=3s "$pkg" 2>&1); then
				echo "$out"
				break
			fi
			echo "$out"
			if ! grep -q 'context deadline exceeded' <<<"$out" || grep -q 'Failing input written' <<<"$out" || [[ $attempt -eq 3 ]]; then
				exit 1
			fi
			echo "==> fuzz $pkg $name: the fuzzing engine itself timed out (no failing input); again"
		done
	done
done
if [[ ${1:-} == --list ]]; then exit 0; fi
if [[ $found -eq 0 ]]; then echo "fuzz: no fuzz targets found"; else echo "fuzz: $found target(s) passed"; fi
