#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the browser tests (internal/testkit/browsertest
# drives it with chromedp) and prints its path. `make test` calls it, as it calls
# sandbox.sh for bubblewrap. As root with apt-get it installs Debian's `chromium`;
# otherwise it says what to do and exits non-zero, and the browser tests skip, saying
# why. Idempotent: once installed, a run only prints the path.
#
#   bash scripts/chromium.sh     # prints the browser's path, e.g. /usr/bin/chromium
#
# stdout carries only the path; progress goes to stderr.
#
# Environment:
#   WSHUB_CHROMIUM  a Chromium binary to use instead (checked, not installed)
set -euo pipefail

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "chromium.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

log() { printf 'chromium.sh: %s\n' "$*" >&2; }
die() {
	printf 'chromium.sh: error: %s\n' "$*" >&2
	exit 1
}

# check PATH: prints PATH when it runs as a browser, fails otherwise. --version alone
# starts no browser, so this is quick.
check() {
	local got
	got=$("$1" --version 2>&1) || die "$1 is installed but '$1 --version' fails: $got"
	[[ $got == *Chromium* || $got == *Chrome* ]] || die "$1 --version does not name Chromium: $got"
	echo "$1"
}

if [[ -n ${WSHUB_CHROMIUM:-} ]]; then
	[[ -x $WSHUB_CHROMIUM ]] || die "WSHUB_CHROMIUM=$WSHUB_CHROMIUM is not an executable file"
	check "$WSHUB_CHROMIUM"
	exit 0
fi
if path=$(command -v chromium); then
	check "$path"
	exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	die "the browser tests need Chromium. Install it (Debian/Ubuntu: sudo apt-get install chromium; Fedora: sudo dnf install chromium), or set WSHUB_CHROMIUM to a Chromium or Chrome binary"
fi

log "installing Debian package chromium"
# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
apt_get update >&2 || log "apt-get update failed (above); trying the package lists already here"
# Without recommends: the browser and its libraries only (fonts come with the image;
# chromium-sandbox is for non-root users, and root runs it with --no-sandbox anyway).
apt_get install -y --no-install-recommends chromium >&2 || die "apt-get install chromium failed (above)"
path=$(command -v chromium) || die "installed chromium, but it is still not on PATH"
check "$path"
