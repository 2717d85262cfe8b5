#!/usr/bin/env bash
# The module compiles for macOS and Windows, which make test checks after the lint: every
# package, the commands too, type-checked and compiled for darwin/arm64 and windows/amd64
# without linking (go list -export: a few seconds with a warm build cache; a build would
# link each command for each system). The Linux-only parts sit behind build tags; a new
# Linux call outside them fails here rather than on someone's laptop. `make dist` builds
# the binaries themselves.
#
#   bash scripts/cross.sh       # exits non-zero, with the compiler's errors, on any failure
#
# Environment:
#   GO              the go command (default go)
#   CROSS_TARGETS   os/arch pairs (default "darwin/arm64 windows/amd64")
set -euo pipefail

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "cross.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

GO=${GO:-go}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
for target in ${CROSS_TARGETS:-darwin/arm64 windows/amd64}; do
	# Cgo off, as make dist builds them: no C cross-compiler is needed.
	CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} "$GO" list -export ./... >/dev/null
done
echo "cross.sh: the module compiles for ${CROSS_TARGETS:-darwin/arm64 windows/amd64}" >&2
