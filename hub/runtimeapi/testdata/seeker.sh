#!/bin/sh
# An agent that looks everywhere it can for a runtime token (wsrt_ and 40 or more
# base62 characters): every process's environment and command line, its own
# environment, the descriptors it inherited, and the files it can read where a runtime
# keeps things (its home, the checkout and the directories above it, /tmp, /run). It
# replies with what it found, or "nothing found". The file search is bounded (depth,
# size, count), where a runtime's own state would be: a machine whose /tmp holds a
# build cache of many gigabytes must not make the turn outlast its time.
cat >/dev/null
token='wsrt_[0-9A-Za-z]{40,}'
found=""
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
	if tr '\0' '\n' <"$f" 2>/dev/null | grep -qE "$token"; then
		found="$found $f"
	fi
done
env | grep -qE "$token" && found="$found env"
for fd in /proc/self/fd/*; do
	case "$fd" in */0 | */1 | */2) continue ;; esac
	timeout 1 head -c 4096 "$fd" 2>/dev/null | grep -qE "$token" && found="$found $fd"
done
up=$(dirname "$PWD")
for d in "$HOME" "$PWD" "$up" "$(dirname "$up")" /tmp /run /var/run; do
	case "$d" in / | /usr | /proc | /sys | /dev) continue ;; esac
	[ -d "$d" ] || continue
	hits=$(find "$d" -xdev -maxdepth 6 -type f -size -256k 2>/dev/null | head -5000 | xargs -r grep -lsE "$token" 2>/dev/null | head -3 | tr '\n' ' ')
	[ -n "$hits" ] && found="$found $hits"
done
if [ -n "$found" ]; then
	echo "found:$found"
else
	echo "nothing found"
fi
