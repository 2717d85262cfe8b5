#!/usr/bin/env bash
# make test's preparation, side by side: the test engines are built (or found in their
# per-user caches) in the background, each into a log of its own, while the lint and the
# cross-compile run in the foreground; then it waits for every engine. On a cold machine
# most of an engine's time is downloading (the module proxy, npm, Debian) and one
# compiler; running them together overlaps the waits. Once cached they take a second.
#
#   GO=go bash scripts/engines.sh     # exits non-zero when the lint or the cross-compile fails
#
# An engine that fails is not fatal: its tests skip and say why, and this prints the end
# of its log. Each step's time goes into make test's phase table (scripts/phases.sh step).
#
# Environment:
#   GO                   the go command (default go)
#   WSHUB_ENGINES        engines to prepare (default "kube s3 gitea agents browser")
set -uo pipefail

case ${1:-} in
'') ;;
-h | --help | help)
	sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "engines.sh: takes no arguments (see --help)" >&2
	exit 2
	;;
esac

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO"
export GO=${GO:-go}
PHASE="bash scripts/phases.sh"
LOGS=$($PHASE dir)/engines
mkdir -p "$LOGS"

# Each engine: its row in the table, the commands, and what skips without it.
declare -A title=([kube]="kube-apiserver" [s3]="S3 (versitygw)" [gitea]="Gitea" [agents]="agent CLIs" [browser]="chromium, axe")
declare -A command=([kube]="bash scripts/kube.sh" [s3]="bash scripts/s3.sh" [gitea]="bash scripts/gitea.sh"
	[agents]="bash scripts/agents.sh" [browser]="bash scripts/chromium.sh && bash scripts/axe.sh")
declare -A skips=([kube]="the kubernetes provider's tests" [s3]="the S3 blob store's tests" [gitea]="the Gitea forge tests"
	[agents]="the tests with the real agent CLIs" [browser]="the browser tests and accessibility checks")

# step runs a command, its output to a log, and records its time and outcome.
step() {
	local name=$1 log=$2 start rc
	shift 2
	start=$(date +%s)
	bash -c "$*" >"$log" 2>&1
	rc=$?
	$PHASE step "$name" $(($(date +%s) - start)) "$rc"
	return "$rc"
}

declare -A pids
for e in ${WSHUB_ENGINES:-kube s3 gitea agents browser}; do
	[[ -n ${command[$e]:-} ]] || { echo "engines.sh: no engine '$e'" >&2; exit 2; }
	step "engine: ${title[$e]}" "$LOGS/$e.log" "${command[$e]}" &
	pids[$e]=$!
done
echo "engines.sh: preparing the engines in the background (logs in ${LOGS#"$REPO"/}/), linting meanwhile" >&2

# The lint and the cross-compile side by side too: the cross-compile's output waits in
# a log, printed when it failed.
step cross-compile "$LOGS/cross.log" "GO=$GO bash scripts/cross.sh" &
cross_pid=$!
failed=0
start=$(date +%s)
GO=$GO bash scripts/lint.sh || failed=1
$PHASE step lint $(($(date +%s) - start)) $failed
cross=0
if ! wait "$cross_pid"; then
	cross=1
	cat "$LOGS/cross.log" >&2
fi

for e in "${!pids[@]}"; do
	if ! wait "${pids[$e]}"; then
		echo "==> ${command[$e]} failed: ${skips[$e]} will skip. The end of its log (${LOGS#"$REPO"/}/$e.log):" >&2
		tail -n 20 "$LOGS/$e.log" >&2
	fi
done
exit $((failed | cross))
