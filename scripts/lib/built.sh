# Sourced by the scripts that build a server from the Go module proxy and cache it per
# user, outside the clone (s3.sh, gitea.sh, kube.sh): their command line, their
# messages, and one build at a time per cache.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/built.sh"
#   script_args 2,19 "$@"     # the lines of the script's header that are its --help

SCRIPT=$(basename "$0")

# script_args takes no argument but --help, which prints the header's lines $1.
script_args() {
	local help=$1
	shift
	case ${1:-} in
	'') ;;
	-h | --help | help)
		sed -n "${help}p" "$0" | sed 's/^# \{0,1\}//' >&2
		exit 0
		;;
	*)
		echo "$SCRIPT: takes no arguments (see --help)" >&2
		exit 2
		;;
	esac
}

# ENGINE_GCFLAGS: the engines are built without the compiler's optimisations and inlining
# (-N -l). They serve tests, a few requests each, and on a cold cache their builds are
# most of make test's first phase on two cores: measured here, kube-apiserver's build took
# 576 s of CPU optimised and 414 s without (-28%), this module's 276 s and 222 s (-20%).
# A binary an earlier, optimised build left in the cache is used as it is.
# WSHUB_ENGINE_GCFLAGS="" builds them optimised.
ENGINE_GCFLAGS=${WSHUB_ENGINE_GCFLAGS-all=-N -l}

log() { printf '%s: %s\n' "$SCRIPT" "$*" >&2; }
die() {
	printf '%s: error: %s\n' "$SCRIPT" "$*" >&2
	exit 1
}

# build_once runs the function $3 in a subshell to make the executable $1, unless it is
# there, holding the lock of the cache $2: concurrent runs build it once. It fails when
# there is still no $1 after.
build_once() {
	local out=$1 cache=$2 build=$3
	if [[ -x $out ]]; then
		log "using cached $out"
	else
		mkdir -p "$cache"
		exec 9>>"$cache/lock"
		flock -w 3600 9 || die "timed out waiting for $cache/lock"
		if [[ -x $out ]]; then
			log "built by a concurrent run: $out"
		else
			("$build")
		fi
		exec 9>&-
	fi
	[[ -x $out ]] || die "$(basename "$out") was not built"
}
