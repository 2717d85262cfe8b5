#!/usr/bin/env bash
# The real agent CLIs for tests (Claude Code and Codex, at the versions pinned in
# scripts/agents.versions), installed from npm into a per-user cache outside the
# clone and reused across runs and clones. `make test` calls it; the tests that run
# the real CLIs (internal/testkit/agentcli finds them) skip, saying why, when it did not run.
# Idempotent: a second run only prints the paths.
#
#   bash scripts/agents.sh     # prints CLAUDE=<path> and CODEX=<path>
#
# Each package goes to $CACHE/<package>@<version> (npm install --prefix), renamed
# into place only once its CLI answers --version, so an interrupted install never
# leaves a half-filled entry. Only the package and its platform package (the native
# binary) are installed: nothing else.
#
# stdout carries only the KEY=path lines; progress goes to stderr.
#
# Environment:
#   WSHUB_AGENTS_CACHE  cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/wshub/agents)
set -euo pipefail

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "agents.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

log() { printf 'agents.sh: %s\n' "$*" >&2; }
die() {
	printf 'agents.sh: error: %s\n' "$*" >&2
	exit 1
}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=${WSHUB_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wshub/agents}
command -v npm >/dev/null || die "npm not found on PATH (needed to install the agent CLIs)"
mkdir -p "$CACHE"

# install PACKAGE VERSION BIN: installs once, prints the path of the CLI.
install() {
	local pkg=$1 version=$2 bin=$3
	local dir=$CACHE/$pkg@$version
	local cli=$dir/node_modules/.bin/$bin
	if [[ -x $cli ]]; then
		log "using cached $pkg@$version"
		echo "$cli"
		return
	fi
	mkdir -p "$(dirname "$dir")"
	# Serialise concurrent installs (two clones running make test at once).
	exec 9>>"$CACHE/lock"
	flock -w 900 9 || die "timed out waiting for $CACHE/lock"
	if [[ ! -x $cli ]]; then
		local tmp start
		tmp=$(mktemp -d "$dir.tmp.XXXXXX")
		start=$(date +%s)
		log "installing $pkg@$version from npm into $dir"
		# Claude Code's postinstall links its platform package's native binary over
		# bin/claude.exe (a placeholder until then), so scripts must run. One retry,
		# soon: without a registry (offline) npm's defaults take over a minute to give up.
		npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund \
			--fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=10000 \
			--loglevel=error "$pkg@$version" >&2 || {
			rm -rf "$tmp"
			die "npm install $pkg@$version failed"
		}
		local got
		got=$("$tmp/node_modules/.bin/$bin" --version 2>&1) || {
			rm -rf "$tmp"
			die "$pkg@$version installed, but '$bin --version' fails: $got"
		}
		[[ $got == *"$version"* ]] || {
			rm -rf "$tmp"
			die "$pkg@$version installed, but '$bin --version' says: $got"
		}
		mv "$tmp" "$dir"
		log "installed $pkg@$version ($got) in $(($(date +%s) - start))s"
	fi
	exec 9>&-
	echo "$cli"
}

claude= codex=
while read -r pkg version; do
	case $pkg in
	'' | '#'*) continue ;;
	@anthropic-ai/claude-code) claude=$(install "$pkg" "$version" claude) ;;
	@openai/codex) codex=$(install "$pkg" "$version" codex) ;;
	*) die "scripts/agents.versions: unknown package $pkg" ;;
	esac
done <"$REPO/scripts/agents.versions"
[[ -n $claude && -n $codex ]] || die "scripts/agents.versions must pin @anthropic-ai/claude-code and @openai/codex"

printf 'CLAUDE=%s\nCODEX=%s\n' "$claude" "$codex"
