#!/usr/bin/env bash
# A real S3 server for tests: the Versity S3 Gateway (versitygw, Apache-2.0) with its
# posix backend, which keeps each bucket as a directory and each object as a file.
# Used by internal/testkit/s3test. Idempotent: a second run only prints the path.
#
#   eval "$(bash scripts/s3.sh)"   # sets VERSITYGW
#   export WSHUB_VERSITYGW=$VERSITYGW
#
# versitygw is built from the Go module proxy alone (go install of its module, no git
# clone, no release download) and cached per user, outside the clone, in
# ${XDG_CACHE_HOME:-~/.cache}/wshub/s3/<version>/versitygw, so a fresh clone (CI)
# reuses it. About three minutes on a cold module cache, then nothing.
#
# stdout carries only the VERSITYGW=path line; progress goes to stderr.
#
# Environment:
#   WSHUB_VERSITYGW_VERSION  versitygw release to build (default v1.8.0)
#   WSHUB_VERSITYGW_CACHE    cache dir (default ${XDG_CACHE_HOME:-~/.cache}/wshub/s3)
set -euo pipefail

# shellcheck source=lib/built.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/built.sh"
script_args 2,18 "$@"

VERSION=${WSHUB_VERSITYGW_VERSION:-v1.8.0}
[[ $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "WSHUB_VERSITYGW_VERSION must look like vN.N.N, got '$VERSION'"
CACHE=${WSHUB_VERSITYGW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wshub/s3}
OUT=$CACHE/$VERSION/versitygw

build() {
	command -v go >/dev/null || die "go not found on PATH (needed to build versitygw)"
	mkdir -p "$(dirname "$OUT")"
	local tmp start
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand $tmp now
	trap "rm -rf '$tmp'" EXIT
	start=$(date +%s)
	log "building versitygw $VERSION from the module proxy (about three minutes on a cold cache)"
	# Outside any module and workspace, so nothing of this clone's go.mod applies:
	# versitygw's go.mod has no replace directives, so go install of it as a module
	# builds exactly what its release pins. Pure Go (CGO_ENABLED=0): the posix backend
	# needs no C library; the RDMA and GPU parts are behind build tags left off. The
	# same version stamps as its Makefile, so --version reports the release.
	cd "$tmp"
	GOWORK=off GO111MODULE=on GOFLAGS=-mod=mod GOBIN="$tmp/bin" CGO_ENABLED=0 \
		go install -trimpath -gcflags="$ENGINE_GCFLAGS" \
		-ldflags "-s -w -X=main.Version=$VERSION -X=main.Build=module-proxy -X=main.BuildTime=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		"github.com/versity/versitygw/cmd/versitygw@$VERSION" ||
		die "go install of versitygw $VERSION failed"
	"$tmp/bin/versitygw" --version >&2 || die "built versitygw does not run"
	# Rename into place so an interrupted build never leaves a partial binary.
	mv "$tmp/bin/versitygw" "$OUT.tmp$$"
	mv "$OUT.tmp$$" "$OUT"
	log "built $OUT ($(du -h "$OUT" | cut -f1)) in $(($(date +%s) - start))s"
}

build_once "$OUT" "$CACHE" build

printf 'VERSITYGW=%s\n' "$OUT"
