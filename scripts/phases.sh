#!/usr/bin/env bash
# Times the phases of `make test` and prints them as a table at the end. Each recipe line
# of the Makefile is its own shell, so the marks are kept in a file of the clone
# (.data/phases/marks): a phase lasts from its mark to the next one.
#
#   bash scripts/phases.sh NAME        # NAME starts now (the first mark clears older ones)
#   bash scripts/phases.sh log         # prints the file go test's output is copied to
#   bash scripts/phases.sh dir         # prints the directory of the marks (and logs)
#   bash scripts/phases.sh step NAME SECONDS STATUS   # a step inside the current phase
#   bash scripts/phases.sh end         # the last phase ends; prints the table
#   bash scripts/phases.sh failed      # the same, the last phase marked as failed
#
# The go test phase's rows under it are its slowest packages, from go test's own
# "ok <package> <seconds>s" lines (the time the package's tests ran, not its build).
# A phase whose work runs side by side (scripts/engines.sh) records each part as a step,
# printed under it with its own time.
set -euo pipefail

DIR=${WSHUB_PHASES_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)/.data/phases}
MARKS=$DIR/marks
LOG=$DIR/go-test.log
STEPS=$DIR/steps
SLOWEST=${WSHUB_PHASES_SLOWEST:-8}

case ${1:-} in
'' | -h | --help | help)
	sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
log)
	echo "$LOG"
	exit 0
	;;
dir)
	echo "$DIR"
	exit 0
	;;
step)
	[[ $# -eq 4 && $3 =~ ^[0-9]+$ && $4 =~ ^[0-9]+$ ]] || { echo "phases.sh: step NAME SECONDS STATUS" >&2; exit 2; }
	mkdir -p "$DIR"
	current=$(tail -n1 "$MARKS" 2>/dev/null | cut -f2)
	# One short line per append: steps ending side by side do not mix their lines.
	printf '%s\t%s\t%s\t%s\n' "$current" "$2" "$3" "$4" >>"$STEPS"
	exit 0
	;;
esac

mkdir -p "$DIR"
now=${WSHUB_PHASES_NOW:-$(date +%s)} # a test sets the clock
if [[ $1 != end && $1 != failed ]]; then
	# A new run starts with the first phase after an end (or with none yet).
	if [[ ! -s $MARKS ]] || tail -n1 "$MARKS" | grep -qE $'^[0-9]+\t(end|failed)$'; then
		: >"$MARKS"
		: >"$LOG"
		: >"$STEPS"
	fi
	printf '%s\t%s\n' "$now" "$1" >>"$MARKS"
	exit 0
fi
printf '%s\t%s\n' "$now" "$1" >>"$MARKS"

# fmt turns seconds into "4m 05s" (or "7s").
fmt() { if (($1 >= 60)); then printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); else printf '%ds' "$1"; fi; }

{
	echo
	echo "==> make test, phase by phase"
	printf '%-44s %10s\n' phase time
	start=
	prev=
	name=
	while IFS=$'\t' read -r at next; do
		if [[ -z $start ]]; then start=$at; fi
		if [[ -n $name ]]; then
			status=
			if [[ $next == failed ]]; then status=" (failed)"; fi
			printf '%-44s %10s\n' "$name$status" "$(fmt $((at - prev)))"
			if [[ -s $STEPS ]]; then
				while IFS=$'\t' read -r phase step secs rc; do
					if [[ $phase == "$name" ]]; then
						if [[ $rc != 0 ]]; then step+=" (failed)"; fi
						printf '  %-42s %10s\n' "$step" "$(fmt "$secs")"
					fi
				done <"$STEPS"
			fi
			if [[ $name == "go test" && -s $LOG ]]; then
				# go test's own per-package times, slowest first.
				sed -nE 's/^(ok|FAIL)[[:space:]]+([^[:space:]]+)[[:space:]]+([0-9.]+)s.*/\3 \2/p' "$LOG" |
					sort -rn | head -n "$SLOWEST" |
					while read -r secs pkg; do printf '  %-42s %9.1fs\n' "${pkg#github.com/wshub/wshub/}" "$secs"; done
			fi
		fi
		prev=$at
		name=$next
	done <"$MARKS"
	printf '%-44s %10s\n' total "$(fmt $((now - start)))"
} >&2
