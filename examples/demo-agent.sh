#!/bin/sh
# A demo coding agent for wshub's command-agent protocol (see docs/agents.md): the
# prompt arrives on standard input and the reply is standard output. `make run` binds
# it as agent_1 when no real agent's key is in the environment.
#
# It carries out one kind of request: a prompt whose first line is "Add a FILE" (or
# "Create", "Write"; "a", "an", "the" optional) makes FILE in the checkout, a heading
# and the request in it. Anything else is noted in NOTES.md, with the text of any
# attached files, so every turn leaves a commit on the workspace branch.
#
#   WSHUB_AGENT_1_COMMAND=$PWD/examples/demo-agent.sh wshub serve
set -f # the prompt's words are split below, never expanded
prompt=$(cat)
first=$(printf '%s\n' "$prompt" | head -n 1)

# The file a request names: a relative path of plain characters, inside the checkout.
requested() {
	# shellcheck disable=SC2086 # split into words on purpose
	set -- $first
	case $(printf '%s' "${1:-}" | tr '[:upper:]' '[:lower:]') in
	add | create | write) shift ;;
	*) return 1 ;;
	esac
	case $(printf '%s' "${1:-}" | tr '[:upper:]' '[:lower:]') in
	a | an | the) shift ;;
	esac
	name=${1:-}
	name=${name%[.,;:!]} # the sentence's own full stop
	case $name in
	'' | /* | *..* | *[!A-Za-z0-9._/-]*) return 1 ;;
	*.* | */*) printf '%s\n' "$name" ;;
	*) return 1 ;;
	esac
}

if file=$(requested); then
	mkdir -p "$(dirname "$file")"
	title=$(basename "$file")
	title=${title%.*}
	{
		printf '# %s\n\n' "$title"
		printf 'Written by the demo agent, asked: %s\n' "$first"
	} >"$file"
	echo "Created $file on branch $WSHUB_BRANCH (model $WSHUB_MODEL)."
else
	printf -- '- %s\n' "$prompt" >>NOTES.md
	echo "Noted in NOTES.md on branch $WSHUB_BRANCH (model $WSHUB_MODEL): $prompt"
fi
if [ -n "$WSHUB_ATTACHMENTS" ]; then
	echo "Attached files, their text added to NOTES.md:"
	echo "$WSHUB_ATTACHMENTS" | while read -r f; do
		[ -n "$f" ] || continue
		case $f in
		*.txt | *.md)
			echo "  $(basename "$f"): $(head -n 1 "$f")"
			{ printf '\nFrom %s:\n\n' "$(basename "$f")" && cat "$f" && echo; } >>NOTES.md
			;;
		*) echo "  $(basename "$f") ($(wc -c <"$f") bytes)" ;;
		esac
	done
fi
