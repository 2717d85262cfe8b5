#!/usr/bin/env bash
# A real Gitea for tests: its REST API and git over smart HTTP, on SQLite, used by
# internal/testkit/giteatest (the Gitea forge adapter's tests). Idempotent: a second run only
# prints the path.
#
#   eval "$(bash scripts/gitea.sh)"   # sets GITEA
#   export WSHUB_GITEA=$GITEA
#
# Gitea is built from the Go module proxy alone (its module's source, no git clone, no
# release download, no node: the web UI's compiled scripts and styles are left out, the
# API and git need none) and cached per user, outside the clone, in
# ${XDG_CACHE_HOME:-~/.cache}/wshub/gitea/<version>/gitea, so a fresh clone (CI) reuses
# it. About eight minutes on a cold cache (two cores), then nothing.
#
# stdout carries only the GITEA=path line; progress goes to stderr.
#
# Environment:
#   WSHUB_GITEA_VERSION  Gitea release to build (default v1.26.0)
#   WSHUB_GITEA_CACHE    cache dir (default ${XDG_CACHE_HOME:-~/.cache}/wshub/gitea)
set -euo pipefail

# shellcheck source=lib/built.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/built.sh"
script_args 2,19 "$@"

# v1.26.0, not the newer v1.27.x: from 1.27 Gitea's module is gitea.dev and needs
# gitea.dev/sdk and gitea.dev/actions-proto-go, which the module proxy this project
# builds from does not serve. v1.26.0 needs Go 1.26.2.
VERSION=${WSHUB_GITEA_VERSION:-v1.26.0}
[[ $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "WSHUB_GITEA_VERSION must look like vN.N.N, got '$VERSION'"
CACHE=${WSHUB_GITEA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wshub/gitea}
OUT=$CACHE/$VERSION/gitea

build() {
	command -v go >/dev/null || die "go not found on PATH (needed to build gitea)"
	command -v gcc >/dev/null || die "gcc not found on PATH (needed for gitea's SQLite driver, through cgo)"
	mkdir -p "$(dirname "$OUT")"
	local tmp start dir pkg
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand $tmp now
	trap "chmod -R u+w '$tmp' 2>/dev/null; rm -rf '$tmp'" EXIT
	start=$(date +%s)
	log "building gitea $VERSION from the module proxy (about eight minutes on a cold cache)"
	# Outside any module and workspace, so nothing of this clone's go.mod applies.
	export GOWORK=off GO111MODULE=on GOFLAGS=-mod=mod
	cd "$tmp"
	# Gitea's go.mod has replace directives, which apply only in the main module, so
	# `go install code.gitea.io/gitea@...` refuses it: its source is built as the main
	# module instead, from a writable copy of what the proxy serves.
	dir=$(go mod download -json "code.gitea.io/gitea@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	[[ -d $dir ]] || die "could not download code.gitea.io/gitea@$VERSION from the module proxy"
	cp -r "$dir" "$tmp/src"
	chmod -R u+w "$tmp/src"
	cd "$tmp/src"
	# The bindata tag embeds templates, options (locales, licences, .gitignore and label
	# templates, which repository creation reads) and public assets into the binary, so
	# it runs from any directory. Their archives are generated first, as Gitea's
	# Makefile does; public/ holds no compiled frontend (that takes node), which only
	# the web pages would use. SQLite is mattn/go-sqlite3 behind the sqlite tags, so
	# cgo (gcc); sqlite_unlock_notify as Gitea's releases have it, for concurrent
	# writers.
	for pkg in options public templates migration; do
		go generate -tags bindata "./modules/$pkg" >&2 || die "go generate of modules/$pkg failed"
	done
	local tags="bindata sqlite sqlite_unlock_notify"
	CGO_ENABLED=1 go build -trimpath -gcflags="$ENGINE_GCFLAGS" -tags "$tags" \
		-ldflags "-s -w -X 'main.Version=${VERSION#v}' -X 'main.Tags=$tags'" \
		-o "$tmp/gitea" . ||
		die "go build of gitea $VERSION failed"
	"$tmp/gitea" --version >&2 || die "built gitea does not run"
	# Rename into place so an interrupted build never leaves a partial binary.
	mv "$tmp/gitea" "$OUT.tmp$$"
	mv "$OUT.tmp$$" "$OUT"
	log "built $OUT ($(du -h "$OUT" | cut -f1)) in $(($(date +%s) - start))s"
}

build_once "$OUT" "$CACHE" build

printf 'GITEA=%s\n' "$OUT"
