# Sourced by the scripts that install Debian packages as root (sandbox.sh, pg.sh, kube.sh,
# chromium.sh). make test builds its engines side by side (engines.sh), so two of them may
# want apt at once: apt-get fails at once when another holds its locks, so ours take
# turns on a lock of their own, and wait for anyone else's (unattended upgrades, a second
# clone's make test) rather than fail.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
#   apt_get update; apt_get install -y --no-install-recommends PACKAGE

apt_get() {
	local lock=${WSHUB_APT_LOCK:-/var/lock/wshub-apt.lock}
	DEBIAN_FRONTEND=noninteractive flock -w 900 "$lock" apt-get -o DPkg::Lock::Timeout=600 "$@"
}
