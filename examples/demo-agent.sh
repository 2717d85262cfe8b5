#!/bin/sh
# A demo coding agent for wshub's command-agent protocol (see docs/agents.md): the
# prompt arrives on standard input and the reply is standard output. It records each
# prompt in NOTES.md, so every turn leaves a commit on the workspace branch.
#
#   WSHUB_AGENT_1_COMMAND=$PWD/examples/demo-agent.sh make run
prompt=$(cat)
printf -- '- %s\n' "$prompt" >> NOTES.md
echo "Noted in NOTES.md on branch $WSHUB_BRANCH (model $WSHUB_MODEL): $prompt"
if [ -n "$WSHUB_ATTACHMENTS" ]; then
	echo "Attached files:"
	echo "$WSHUB_ATTACHMENTS" | while read -r f; do [ -n "$f" ] && echo "  $f ($(wc -c < "$f") bytes)"; done
fi
