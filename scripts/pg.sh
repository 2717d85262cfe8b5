#!/usr/bin/env bash
# Local PostgreSQL cluster for development and tests (NOT for production:
# fsync=off). TCP connections need a password, generated once and kept in
# $WSHUB_PG_DIR/password: agents run on this host with network access to loopback,
# so a passwordless database on 127.0.0.1 would be theirs to read. The Unix socket
# (inside .data/, which agents never see) trusts local users.
#
#   export DATABASE_URL=$(scripts/pg.sh)   # ensure running, print URL
#   scripts/pg.sh stop                     # stop the local cluster
#   scripts/pg.sh status                   # pg_ctl status of the local cluster
#
# If DATABASE_URL is already set (and non-empty), `scripts/pg.sh` (start) just
# prints it and does nothing else. `stop`/`status` always act on the local
# cluster.
#
# stdout carries only the URL; all diagnostics go to stderr.
#
# Environment:
#   WSHUB_PG_PORT     TCP port on 127.0.0.1 (default: a free port chosen when the
#                     cluster is made, kept in $WSHUB_PG_DIR/port, so that two
#                     clones' clusters never collide)
#   WSHUB_PG_DIR      cluster base dir (default $REPO/.data/pg)
#   WSHUB_PG_TIMEOUT  seconds to wait for lock / readiness (default 60)
set -euo pipefail

cmd=${1:-start}
case "$cmd" in
start | stop | status) ;;
-h | --help | help)
	sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 0
	;;
*)
	echo "pg.sh: unknown command '$cmd' (use: start | stop | status)" >&2
	exit 2
	;;
esac

if [[ $cmd == start && -n ${DATABASE_URL:-} ]]; then
	printf '%s\n' "$DATABASE_URL"
	exit 0
fi

log() { printf 'pg.sh: %s\n' "$*" >&2; }
die() {
	printf 'pg.sh: error: %s\n' "$*" >&2
	exit 1
}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
TIMEOUT=${WSHUB_PG_TIMEOUT:-60}
DB=wshub

[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "WSHUB_PG_TIMEOUT must be a number, got '$TIMEOUT'"

BASE=${WSHUB_PG_DIR:-$REPO/.data/pg}
mkdir -p "$BASE"
BASE=$(cd "$BASE" && pwd -P)
DATA=$BASE/data
LOGFILE=$BASE/log
SOCKDIR=$BASE/run
LOCK=$BASE/lock
PWFILE=$BASE/password
PORTFILE=$BASE/port

# ---------------------------------------------------------------- binaries --

find_pgbin() {
	local d
	if d=$(command -v pg_config 2>/dev/null) && d=$("$d" --bindir 2>/dev/null) &&
		[[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]]; then
		printf '%s\n' "$d"
		return 0
	fi
	# Debian/Ubuntu layout: newest version first.
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -rn); do
		if [[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]]; then
			printf '%s\n' "$d"
			return 0
		fi
	done
	if d=$(command -v initdb 2>/dev/null); then
		d=$(dirname "$(readlink -f "$d")")
		if [[ -x $d/pg_ctl && -x $d/postgres ]]; then
			printf '%s\n' "$d"
			return 0
		fi
	fi
	return 1
}

if ! PGBIN=$(find_pgbin); then
	if [[ $cmd != start ]]; then
		die "PostgreSQL server binaries not found"
	fi
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		log "PostgreSQL not found; installing Debian package 'postgresql'"
		# shellcheck source=lib/apt.sh
		source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
		apt_get update >&2
		apt_get install -y --no-install-recommends postgresql >&2
		PGBIN=$(find_pgbin) || die "installed 'postgresql' but still cannot find initdb/pg_ctl/postgres"
	else
		die "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found; install PostgreSQL (e.g. 'apt-get install postgresql') or set DATABASE_URL"
	fi
fi

# Client tools: prefer the ones next to the server, fall back to PATH.
client() {
	if [[ -x $PGBIN/$1 ]]; then printf '%s\n' "$PGBIN/$1"; else command -v "$1" || die "$1 not found"; fi
}
PSQL=$(client psql)
PG_ISREADY=$(client pg_isready)

# ------------------------------------------------------------------- owner --
# initdb/postgres refuse to run as root: as root, run the server as the
# owner of an existing data dir (if not root) or else as 'postgres'.

if [[ $(id -u) -eq 0 ]]; then
	RUN_AS=postgres
	if [[ -d $DATA ]]; then
		owner=$(stat -c %U "$DATA")
		[[ $owner != root ]] && RUN_AS=$owner
	fi
	id "$RUN_AS" >/dev/null 2>&1 || die "as root the cluster must run as user '$RUN_AS', which does not exist (useradd --system postgres)"
	as_pg() { (cd / && runuser -u "$RUN_AS" -- "$@"); }
	chown "$RUN_AS": "$BASE"
	if ! as_pg test -w "$BASE" -a -x "$BASE"; then
		# e.g. a clone under /root (mode 700): postgres cannot reach it.
		if [[ -n ${WSHUB_PG_DIR:-} ]]; then
			die "user '$RUN_AS' cannot access WSHUB_PG_DIR=$BASE (a parent directory is not traversable by it)"
		fi
		alt=/tmp/wshub-pg-$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)
		log "user '$RUN_AS' cannot access $BASE (parent not traversable); using $alt instead"
		rmdir "$BASE" 2>/dev/null || true
		BASE=$alt DATA=$alt/data LOGFILE=$alt/log SOCKDIR=$alt/run LOCK=$alt/lock PWFILE=$alt/password PORTFILE=$alt/port
		mkdir -p "$BASE"
		chown "$RUN_AS": "$BASE"
		chmod 700 "$BASE"
		as_pg test -w "$BASE" -a -x "$BASE" || die "user '$RUN_AS' cannot access $BASE either; set WSHUB_PG_DIR"
	fi
else
	RUN_AS=$(id -un)
	if [[ -d $DATA && ! -O $DATA ]]; then
		die "$DATA is owned by $(stat -c %U "$DATA"), not $RUN_AS (was it created as root?); run as root/that user, or remove $BASE"
	fi
	as_pg() { "$@"; }
fi

# -------------------------------------------------------------------- lock --
# Serialise concurrent invocations. fd 9 must NOT leak into the postmaster
# (it would hold the lock forever), hence the 9>&- on server commands.

exec 9>>"$LOCK"
if ! flock -w "$TIMEOUT" 9; then
	die "timed out after ${TIMEOUT}s waiting for lock $LOCK"
fi

pg_ctl_() { as_pg "$PGBIN/pg_ctl" -D "$DATA" "$@" 9>&-; }

# ------------------------------------------------------------------- port --
# WSHUB_PG_PORT if set; else the port this cluster was given, kept in $PORTFILE; else
# the port a running cluster of an older pg.sh listens on; else a free one, chosen
# now, from a start derived from the clone's path (two clones on one machine get two
# clusters that do not collide).

port_free() { ! (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

choose_port() {
	local start p i
	# Below the kernel's ephemeral range (32768 and up by default), which busy test runs
	# fill with their clients' own ports: a port there may be bound though no one listens.
	start=$(printf '%s' "$REPO" | cksum | cut -d' ' -f1)
	start=$((20000 + start % 12000))
	for ((i = 0; i < 200; i++)); do
		p=$((start + i))
		if port_free "$p"; then
			printf '%s\n' "$p"
			return 0
		fi
	done
	return 1
}

if [[ -n ${WSHUB_PG_PORT:-} ]]; then
	PORT=$WSHUB_PG_PORT
elif [[ -s $PORTFILE ]]; then
	PORT=$(<"$PORTFILE")
elif [[ -f $DATA/postmaster.pid ]] && pg_ctl_ status >/dev/null 2>&1; then
	PORT=$(sed -n 4p "$DATA/postmaster.pid")
elif [[ $cmd == start ]]; then
	PORT=$(choose_port) || die "no free port found for PostgreSQL; set WSHUB_PG_PORT"
	log "chose port $PORT for this clone's cluster (kept in $PORTFILE)"
fi
[[ -z ${PORT:-} || $PORT =~ ^[0-9]+$ ]] || die "the port must be a number, got '$PORT' (WSHUB_PG_PORT or $PORTFILE)"
[[ $cmd == start && -z ${WSHUB_PG_PORT:-} ]] && printf '%s\n' "$PORT" >"$PORTFILE"

is_running() {
	[[ -f $DATA/PG_VERSION ]] || return 1
	pg_ctl_ status >/dev/null 2>&1
}

show_log_tail() {
	if [[ -f $LOGFILE ]]; then
		echo "---- last 40 lines of $LOGFILE ----" >&2
		tail -n 40 "$LOGFILE" >&2 || true
		echo "----" >&2
	fi
}

# ------------------------------------------------------------ stop / status --

if [[ $cmd == stop ]]; then
	if is_running; then
		log "stopping cluster in $DATA"
		pg_ctl_ -m fast -w -t "$TIMEOUT" stop >&2 || {
			show_log_tail
			die "pg_ctl stop failed"
		}
	else
		log "cluster in $DATA is not running"
	fi
	exit 0
fi

if [[ $cmd == status ]]; then
	if [[ ! -f $DATA/PG_VERSION ]]; then
		log "no cluster in $DATA"
		exit 3
	fi
	pg_ctl_ status >&2
	exit $?
fi

# ------------------------------------------------------------------- start --

# The password of the postgres role for TCP connections: made once, kept beside the
# cluster, readable by its owner only (and by the server's user, for initdb).
if [[ ! -s $PWFILE ]]; then
	(umask 077 && head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 32 >"$PWFILE")
fi
[[ $(id -u) -eq 0 ]] && chown "$RUN_AS": "$PWFILE"
PGPASS=$(<"$PWFILE")
[[ $PGPASS =~ ^[A-Za-z0-9]{32}$ ]] || die "$PWFILE does not hold a generated password; remove it"
URL="postgres://postgres:${PGPASS}@127.0.0.1:${PORT}/${DB}?sslmode=disable"
HBA=$(
	cat <<-'EOF'
		# wshub dev/test cluster (scripts/pg.sh): the socket trusts local users; TCP on
		# loopback needs the password (agents on this host can reach loopback).
		local all all                trust
		host  all all 127.0.0.1/32   scram-sha-256
		host  all all ::1/128        scram-sha-256
	EOF
)

if [[ ! -f $DATA/PG_VERSION ]]; then
	if [[ -e $DATA ]] && [[ -n $(ls -A "$DATA" 2>/dev/null) ]]; then
		die "$DATA exists but is not a PostgreSQL data directory; remove it"
	fi
	log "initialising cluster in $DATA ($("$PGBIN/postgres" --version))"
	rm -rf "$DATA"
	as_pg mkdir -p "$DATA"
	as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
		--pwfile="$PWFILE" --encoding=UTF8 --locale=C --no-sync >"$BASE/initdb.log" 2>&1 9>&- || {
		cat "$BASE/initdb.log" >&2
		rm -rf "$DATA"
		die "initdb failed"
	}
	printf '%s\n' "$HBA" | as_pg tee "$DATA/pg_hba.conf" >/dev/null
	printf "\ninclude_if_exists = 'wshub.conf'\n" | as_pg tee -a "$DATA/postgresql.conf" >/dev/null
fi

if is_running; then
	# postmaster.pid line 4 is the port the running server listens on.
	running_port=$(sed -n 4p "$DATA/postmaster.pid" 2>/dev/null || true)
	if [[ -n $running_port && $running_port != "$PORT" ]]; then
		die "cluster in $DATA is already running on port $running_port, not $PORT; run 'scripts/pg.sh stop' first"
	fi
else
	# Unix socket path is limited to ~107 bytes; fall back to TCP only.
	sockdirs="'$SOCKDIR'"
	if ((${#SOCKDIR} + 20 > 107)); then
		log "socket dir path too long, disabling unix socket (TCP 127.0.0.1 only)"
		sockdirs="''"
	else
		as_pg mkdir -p "$SOCKDIR"
	fi
	as_pg tee "$DATA/wshub.conf" >/dev/null <<-EOF
		# Generated by scripts/pg.sh on every start; edits will be lost.
		listen_addresses = '127.0.0.1'
		port = $PORT
		unix_socket_directories = $sockdirs
		max_connections = 300
		shared_buffers = 128MB
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		wal_level = minimal
		max_wal_senders = 0
		timezone = 'UTC'
		log_timezone = 'UTC'
		logging_collector = off
		log_min_messages = warning
		log_min_error_statement = error
	EOF
	log "starting cluster on 127.0.0.1:$PORT (log: $LOGFILE)"
	as_pg touch "$LOGFILE"
	if ! pg_ctl_ -l "$LOGFILE" -w -t "$TIMEOUT" start >&2; then
		show_log_tail
		die "could not start PostgreSQL (is port $PORT already in use? set WSHUB_PG_PORT, or remove $PORTFILE to choose another)"
	fi
fi

# Wait until the server accepts connections.
deadline=$((SECONDS + TIMEOUT))
until "$PG_ISREADY" -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres; do
	if ((SECONDS >= deadline)); then
		show_log_tail
		die "PostgreSQL on 127.0.0.1:$PORT not ready after ${TIMEOUT}s"
	fi
	sleep 0.2
done

export PGPASSWORD=$PGPASS
admin_conn="host=127.0.0.1 port=$PORT user=postgres dbname=postgres sslmode=disable connect_timeout=10"

# A cluster made by an older pg.sh trusts loopback: give the role its password, then
# require it.
if grep -qE '^host[[:space:]].*[[:space:]]trust[[:space:]]*$' "$DATA/pg_hba.conf"; then
	log "requiring a password for TCP connections (was trust)"
	# On stdin, not -c: psql interpolates variables only there (the password is [A-Za-z0-9]).
	printf "alter role postgres password '%s';\n" "$PGPASS" | PGOPTIONS= "$PSQL" "$admin_conn" -X -q \
		-v ON_ERROR_STOP=1 >&2 || die "could not set the postgres password"
	printf '%s\n' "$HBA" | as_pg tee "$DATA/pg_hba.conf" >/dev/null
	pg_ctl_ reload >&2 || die "pg_ctl reload failed"
	sleep 0.5
fi

# Create the database if missing.
exists=$(PGOPTIONS= "$PSQL" "$admin_conn" -X -q -tA -v ON_ERROR_STOP=1 \
	-c "select 1 from pg_database where datname = '$DB'") ||
	die "could not query 127.0.0.1:$PORT as postgres"
if [[ $exists != 1 ]]; then
	log "creating database $DB"
	PGOPTIONS= "$PSQL" "$admin_conn" -X -q -v ON_ERROR_STOP=1 -c "create database $DB" >&2 ||
		die "could not create database $DB"
fi

printf '%s\n' "$URL"
