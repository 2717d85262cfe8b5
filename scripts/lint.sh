#!/usr/bin/env bash
# The gate `make test` runs before the tests: gofmt, no merge conflict markers, go vet
# and staticcheck over the whole module. staticcheck is built from the Go module proxy at the version below
# into a per-user cache outside the clone, once, and reused.
#
#   bash scripts/lint.sh       # exits non-zero, listing what to fix, on any finding
#
# Environment:
#   GO                  the go command (default go)
#   WSHUB_TOOLS_CACHE   cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/wshub/tools)
set -euo pipefail

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "lint.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

STATICCHECK_VERSION=v0.8.2
GO=${GO:-go}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=${WSHUB_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wshub/tools}
cd "$REPO"

log() { printf 'lint.sh: %s\n' "$*" >&2; }

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.data/*'))
if [ -n "$unformatted" ]; then
	log "not gofmt-ed (run gofmt -w on them):"
	printf '%s\n' "$unformatted" >&2
	exit 1
fi

# A merge's conflict markers left in a committed file (a template renders them as text).
if conflicts=$(git grep -nE '^(<<<<<<< |>>>>>>> |=======$)' -- ':!*.md' 2>/dev/null) && [ -n "$conflicts" ]; then
	log "merge conflict markers left in:"
	printf '%s\n' "$conflicts" >&2
	exit 1
fi

# With the race detector's flags where it can run (it needs cgo), the vet and
# staticcheck compile every package, tests too, as make test's go test -race will: on a
# cold cache that compile is done once, here, and the tests reuse it.
race=
[ "$("$GO" env CGO_ENABLED)" = 1 ] && race=-race
GOFLAGS="${GOFLAGS:+$GOFLAGS }$race" "$GO" vet ./...

bin="$CACHE/staticcheck@$STATICCHECK_VERSION"
if [ ! -x "$bin/staticcheck" ]; then
	log "building staticcheck $STATICCHECK_VERSION from the module proxy into $bin"
	tmp=$(mktemp -d "$CACHE.XXXXXX" 2>/dev/null || { mkdir -p "$CACHE" && mktemp -d "$CACHE.XXXXXX"; })
	trap 'rm -rf "$tmp"' EXIT
	# Its own module graph, not this module's: GOFLAGS=-mod=mod from outside the clone.
	(cd "$tmp" && GOBIN="$tmp/bin" GOFLAGS=-mod=mod "$GO" install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION")
	mkdir -p "$CACHE"
	rm -rf "$bin"
	mv "$tmp/bin" "$bin"
fi
GOFLAGS="${GOFLAGS:+$GOFLAGS }$race" "$bin/staticcheck" ./...
log "gofmt, go vet and staticcheck $STATICCHECK_VERSION: clean"
