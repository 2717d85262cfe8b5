#!/usr/bin/env bash
# Makes sure the agent sandbox's programs are installed: bubblewrap (bwrap), and passt's
# pasta and iproute2's ip (the network of projects with network "full"). `make run` and
# `make test` call it, as they call pg.sh for PostgreSQL. As root with apt-get it
# installs Debian's `bubblewrap`, `passt` and `iproute2`; otherwise it says what to do.
# It also installs `dbus-daemon` where it can, for the tests of the systemd scope a hub
# on cgroup v2 asks for (they skip without it); its absence stops nothing.
#
# Skipped when WSHUB_SANDBOX=none (agents then run unconfined; development only).
set -euo pipefail

if [[ ${WSHUB_SANDBOX:-bwrap} == none ]]; then
	exit 0
fi
# program name -> Debian package
declare -A packages=([bwrap]=bubblewrap [pasta]=passt [ip]=iproute2 [dbus-daemon]=dbus-daemon)
# found: on PATH, or in a system directory a user's PATH may leave out (ip is in /usr/sbin)
found() { command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 || -x /sbin/$1 ]]; }
missing=()
for program in bwrap pasta ip; do
	found "$program" || missing+=("${packages[$program]}")
done
can_install() { [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; }
optional=()
if ! found dbus-daemon && can_install; then
	optional+=("${packages[dbus-daemon]}")
fi
if [[ ${#missing[@]} -eq 0 && ${#optional[@]} -eq 0 ]]; then
	exit 0
fi
if can_install; then
	missing+=("${optional[@]}")
	echo "sandbox.sh: installing Debian package(s) ${missing[*]}" >&2
	# shellcheck source=lib/apt.sh
	source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
	apt_get update >&2 || true
	apt_get install -y --no-install-recommends "${missing[@]}" >&2
	for program in bwrap pasta ip; do
		found "$program" || { echo "sandbox.sh: installed ${packages[$program]} but $program is still not on PATH" >&2; exit 1; }
	done
	exit 0
fi
echo "sandbox.sh: error: the agent sandbox needs ${missing[*]} (bwrap: bubblewrap; pasta: passt; ip: iproute2). Install (Debian/Ubuntu: sudo apt-get install ${missing[*]}; Fedora: sudo dnf install ${missing[*]}), or set WSHUB_SANDBOX=none to run agents unconfined (unsafe, development only)." >&2
exit 1
