#!/usr/bin/env bash
# Makes sure bubblewrap (bwrap), the agent sandbox, is installed: `make run` and
# `make test` call it, as they call pg.sh for PostgreSQL. As root with apt-get it
# installs Debian's `bubblewrap`; otherwise it says what to do.
#
# Skipped when WSHUB_SANDBOX=none (agents then run unconfined; development only).
set -euo pipefail

if [[ ${WSHUB_SANDBOX:-bwrap} == none ]]; then
	exit 0
fi
if command -v bwrap >/dev/null 2>&1; then
	exit 0
fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
	echo "sandbox.sh: bubblewrap not found; installing Debian package 'bubblewrap'" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2 || true
	apt-get install -y --no-install-recommends bubblewrap >&2
	command -v bwrap >/dev/null 2>&1 || { echo "sandbox.sh: installed 'bubblewrap' but bwrap is still not on PATH" >&2; exit 1; }
	exit 0
fi
echo "sandbox.sh: error: bubblewrap (bwrap) is not installed. Install it (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap), or set WSHUB_SANDBOX=none to run agents unconfined (unsafe, development only)." >&2
exit 1
