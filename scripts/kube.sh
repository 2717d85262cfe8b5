#!/usr/bin/env bash
# Binaries for a real Kubernetes API server in tests (the envtest arrangement:
# etcd + kube-apiserver, no kubelet, no controller manager), used by
# internal/testkit/kubetest. Idempotent: a second run only prints the paths.
#
#   eval "$(bash scripts/kube.sh)"   # sets KUBE_APISERVER and ETCD
#   export WSHUB_KUBE_APISERVER=$KUBE_APISERVER WSHUB_ETCD=$ETCD
#
# kube-apiserver is built from the Go module proxy alone (no git clone of
# kubernetes/kubernetes, no release download) and cached per user, outside the
# clone, in ${XDG_CACHE_HOME:-~/.cache}/wshub/kube/<version>/kube-apiserver, so a fresh
# clone (CI) reuses it. etcd is taken from PATH, or
# installed with apt-get (Debian package etcd-server) when running as root.
#
# stdout carries only the two KEY=path lines; progress goes to stderr.
#
# Environment:
#   WSHUB_KUBE_VERSION  Kubernetes release to build (default v1.37.2)
#   WSHUB_KUBE_CACHE    cache dir (default ${XDG_CACHE_HOME:-~/.cache}/wshub/kube)
set -euo pipefail

# shellcheck source=lib/built.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/built.sh"
script_args 2,18 "$@"

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VERSION=${WSHUB_KUBE_VERSION:-v1.37.2}
[[ $VERSION =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "WSHUB_KUBE_VERSION must look like v1.N.M, got '$VERSION'"
MINOR=${BASH_REMATCH[1]}
# The staging modules (k8s.io/api, client-go, ...) are published as v0.N.M for
# Kubernetes v1.N.M.
STAGING=v0.${MINOR}.${BASH_REMATCH[2]}
CACHE=${WSHUB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wshub/kube}
OUT=$CACHE/$VERSION/kube-apiserver

# ---------------------------------------------------------- kube-apiserver --

build_apiserver() {
	command -v go >/dev/null || die "go not found on PATH (needed to build kube-apiserver)"
	mkdir -p "$(dirname "$OUT")"
	local tmp start
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand $tmp now
	trap "rm -rf '$tmp'" EXIT
	start=$(date +%s)
	log "building kube-apiserver $VERSION from the module proxy (several minutes on a cold cache)"

	# A throwaway main module: k8s.io/kubernetes cannot be required as is,
	# because its go.mod replaces every staging module (k8s.io/api, ...) with
	# ./staging/src/..., and replace directives only apply in the main module.
	# So we replace each of them with its published v0.N.M instead.
	cd "$tmp"
	export GOFLAGS=-mod=mod GOWORK=off GO111MODULE=on
	cat >go.mod <<-EOF
		module kubebuild

		go 1.26.0

		require k8s.io/kubernetes $VERSION
	EOF
	local gomod mods m
	gomod=$(go mod download -json "k8s.io/kubernetes@$VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
	[[ -f $gomod ]] || die "could not download k8s.io/kubernetes@$VERSION from the module proxy"
	mods=$(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/.*#\1#p' "$gomod")
	[[ -n $mods ]] || die "no ./staging replace directives found in $gomod"
	for m in $mods; do
		# Only those kubernetes requires: a few (sample-controller, ...) are
		# not needed for the build and need not be on the proxy.
		if grep -qE "^[[:space:]]*$m v0\.0\.0" "$gomod"; then
			go mod edit -replace="$m=$m@$STAGING"
		fi
	done

	# The same version stamps as the release build (hack/lib/version.sh), so
	# /version reports $VERSION rather than v0.0.0-master. -mod=mod lets the
	# build fill go.sum itself.
	local ld="-s -w" p
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $p.gitVersion=$VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
		ld+=" -X $p.gitTreeState=clean -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	done
	CGO_ENABLED=0 go build -trimpath -gcflags="$ENGINE_GCFLAGS" -ldflags "$ld" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver ||
		die "go build of kube-apiserver $VERSION failed"
	"$tmp/kube-apiserver" --version >&2 || die "built kube-apiserver does not run"
	# Rename into place so an interrupted build never leaves a partial binary.
	mv "$tmp/kube-apiserver" "$OUT.tmp$$"
	mv "$OUT.tmp$$" "$OUT"
	cd "$REPO"
	log "built $OUT ($(du -h "$OUT" | cut -f1)) in $(($(date +%s) - start))s"
}

build_once "$OUT" "$CACHE" build_apiserver

# -------------------------------------------------------------------- etcd --

if ! ETCD=$(command -v etcd); then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		log "etcd not found; installing Debian package 'etcd-server'"
		# shellcheck source=lib/apt.sh
		source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
		apt_get update >&2
		# The package starts an etcd service where an init system runs; tests
		# use their own etcd on free ports, so that does not matter.
		apt_get install -y --no-install-recommends etcd-server >&2 ||
			die "apt-get install etcd-server failed"
		ETCD=$(command -v etcd || echo /usr/bin/etcd)
		[[ -x $ETCD ]] || die "installed etcd-server but cannot find the etcd binary"
	else
		die "etcd not found on PATH; install it (Debian: 'apt-get install etcd-server', as root) or put an etcd binary on PATH"
	fi
fi
ETCD=$(readlink -f "$ETCD")

printf 'KUBE_APISERVER=%s\nETCD=%s\n' "$OUT" "$ETCD"
