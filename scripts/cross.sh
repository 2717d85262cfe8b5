#!/usr/bin/env bash
# The module builds for macOS and Windows, which make test checks beside the lint: every
# package, the commands too, type-checked for darwin/arm64 and windows/amd64 from source
# (internal/crosscheck: go list names each system's files, go/types checks them, the
# module's function bodies too; seconds even on a cold cache, where compiling the whole
# dependency graph for two more systems took minutes). The Linux-only parts sit behind
# build tags; a new Linux call outside them fails here rather than on someone's laptop.
# `make dist` builds the binaries themselves.
#
#   bash scripts/cross.sh       # exits non-zero, with the type checker's errors, on any failure
#
# Environment:
#   GO              the go command (default go)
#   CROSS_TARGETS   os/arch pairs (default "darwin/arm64 windows/amd64")
set -euo pipefail

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "cross.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

GO=${GO:-go}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Built for this machine, without the lint's or the tests' flags (GOFLAGS=-race would
# need cgo, which the other systems' checks turn off).
GOFLAGS= "$GO" build -o "$tmp/crosscheck" ./internal/crosscheck
for target in ${CROSS_TARGETS:-darwin/arm64 windows/amd64}; do
	# Cgo off, as make dist builds them: no C cross-compiler is needed. The checker's
	# go list is the go on PATH, which GO names when it is a path.
	PATH=$(dirname "$(command -v "$GO")"):$PATH GOFLAGS= CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} \
		"$tmp/crosscheck" ./...
done
echo "cross.sh: the module type-checks for ${CROSS_TARGETS:-darwin/arm64 windows/amd64}" >&2
