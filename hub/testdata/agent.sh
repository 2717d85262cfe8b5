#!/bin/sh
# A fake coding agent for tests, speaking the command-agent protocol (design.md): the
# prompt on stdin, the reply on stdout. The prompt's first word picks the behaviour.
prompt=$(cat)
set -- $prompt
case "$1" in
fail)
	echo "the agent tripped over something" >&2
	exit 3 ;;
sleep)
	sleep "$2"
	echo "slept $2" ;;
big)
	awk 'BEGIN { for (i = 0; i < 20000; i++) printf "x" }' ;;
write)
	echo "$2" > "$2.txt"
	echo "wrote $2.txt" ;;
hold)
	# Leaves work in the checkout, then works on for $3 seconds: a turn cut short
	# there has work to keep (the sleep, seen from the host, says the agent runs).
	echo "$2" > "$2.txt"
	sleep "$3"
	echo "held $2" ;;
breakgit)
	# Leaves work, and a repository the hub's git cannot write objects to.
	echo "$2" > "$2.txt"
	rm -rf .git/objects && : > .git/objects
	echo "wrote $2.txt and broke .git" ;;
attachments)
	echo "$WSHUB_ATTACHMENTS" | while read -r f; do
		[ -n "$f" ] && printf '%s=%s\n' "$f" "$(cat "$f")"
	done ;;
steps)
	# Turn events on fd 3 (the command-agent event protocol), then the reply.
	i=0
	while [ "$i" -lt "$2" ]; do
		i=$((i + 1))
		printf '{"type":"tool_started","tool":"bash","summary":"step %s"}\n' "$i" >&"$WSHUB_EVENTS_FD"
		printf 'not an event\n' >&"$WSHUB_EVENTS_FD"
		printf '{"type":"tool_finished","tool":"bash"}\n' >&"$WSHUB_EVENTS_FD"
	done
	printf '{"type":"text","delta":"all %s steps done"}\n' "$2" >&"$WSHUB_EVENTS_FD"
	echo "did $2 steps" ;;
paced)
	# $2 tool steps, $3 seconds apart (a turn whose status moves while it runs).
	i=0
	while [ "$i" -lt "$2" ]; do
		i=$((i + 1))
		printf '{"type":"tool_started","tool":"bash","summary":"step %s"}\n' "$i" >&"$WSHUB_EVENTS_FD"
		sleep "$3"
		printf '{"type":"tool_finished","tool":"bash"}\n' >&"$WSHUB_EVENTS_FD"
	done
	echo "did $2 paced steps" ;;
clock)
	# $2 tool steps, $3 seconds apart, each saying when it was written (benchmarks).
	i=0
	while [ "$i" -lt "$2" ]; do
		i=$((i + 1))
		sleep "$3"
		printf '{"type":"tool_started","tool":"clock","summary":"at %s #%s"}\n' "$(date +%s%N)" "$i" >&"$WSHUB_EVENTS_FD"
	done
	echo "clocked $2" ;;
ask)
	# An approval (the command-agent event protocol): ask on fd 3 for each id given,
	# read the decisions from fd 4, and say what they were.
	shift
	for id in "$@"; do
		printf '{"type":"tool_started","tool":"bash","summary":"before %s"}\n' "$id" >&"$WSHUB_EVENTS_FD"
		printf '{"type":"approval_requested","id":"%s","tool":"bash","summary":"rm -rf %s"}\n' "$id" "$id" >&"$WSHUB_EVENTS_FD"
		read -r answer <&"$WSHUB_DECISIONS_FD"
		echo "$answer"
	done ;;
run)
	# An approval for a command given whole (the tool input): the rest of the prompt,
	# its spaces kept. The decision line, with the hash of the input approved, is the
	# reply.
	cmd=${prompt#run }
	printf '{"type":"approval_requested","id":"run","tool":"Bash","summary":"%s","input":{"command":"%s"}}\n' "$cmd" "$cmd" >&"$WSHUB_EVENTS_FD"
	read -r answer <&"$WSHUB_DECISIONS_FD"
	echo "$answer" ;;
env)
	echo "model=$WSHUB_MODEL mode=$WSHUB_RUNTIME_MODE branch=$WSHUB_BRANCH turn=$WSHUB_TURN_ID" ;;
*)
	echo "echo: $prompt" ;;
esac
