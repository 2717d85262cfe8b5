#!/usr/bin/env bash
# axe-core, the accessibility checker the browser tests inject into every page
# (internal/testkit/browsertest's Axe), at the version pinned below, fetched from npm once
# into a per-user cache outside the clone and reused across runs and clones.
# `make test` calls it; without it the tests that check accessibility skip, saying why.
# Idempotent: a second run only prints the path.
#
#   bash scripts/axe.sh     # prints the path of axe.min.js
#
# The package goes to $CACHE/axe-core@<version> (npm install --prefix), renamed into
# place only once its axe.min.js names the pinned version, so an interrupted install
# never leaves a half-filled entry.
#
# stdout carries only the path; progress goes to stderr.
#
# Environment:
#   WSHUB_AXE_CACHE  cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/wshub/axe)
set -euo pipefail

# The pinned version; internal/testkit/browsertest reads this line to find the cache entry.
AXE_VERSION=4.14.1

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "axe.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

log() { printf 'axe.sh: %s\n' "$*" >&2; }
die() {
	printf 'axe.sh: error: %s\n' "$*" >&2
	exit 1
}

CACHE=${WSHUB_AXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wshub/axe}
dir=$CACHE/axe-core@$AXE_VERSION
js=$dir/node_modules/axe-core/axe.min.js

# names_version FILE: whether FILE is axe's bundle of the pinned version (its first
# line is the banner "/*! axe v4.14.1").
names_version() { head -c 200 "$1" 2>/dev/null | grep -qF "axe v$AXE_VERSION"; }

if names_version "$js"; then
	echo "$js"
	exit 0
fi
command -v npm >/dev/null || die "npm not found on PATH (needed to fetch axe-core; Debian: apt-get install npm)"
mkdir -p "$CACHE"
# Serialise concurrent installs (two clones running make test at once).
exec 9>>"$CACHE/lock"
flock -w 900 9 || die "timed out waiting for $CACHE/lock"
if ! names_version "$js"; then
	tmp=$(mktemp -d "$dir.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	start=$(date +%s)
	log "installing axe-core@$AXE_VERSION from npm into $dir"
	# A plain file bundle with no dependencies: nothing to run at install. One retry,
	# soon: without a registry (offline) npm's defaults take over a minute to give up.
	npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund \
		--ignore-scripts --fetch-retries=1 --fetch-retry-mintimeout=2000 \
		--fetch-retry-maxtimeout=10000 --loglevel=error "axe-core@$AXE_VERSION" >&2 ||
		die "npm install axe-core@$AXE_VERSION failed (above)"
	names_version "$tmp/node_modules/axe-core/axe.min.js" ||
		die "axe-core@$AXE_VERSION installed, but its axe.min.js does not start with 'axe v$AXE_VERSION'"
	rm -rf "$dir" # a stale entry (not of this version) would block the rename
	mv "$tmp" "$dir"
	trap - EXIT
	log "installed axe-core@$AXE_VERSION in $(($(date +%s) - start))s"
fi
echo "$js"
