#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster behind PgBouncer in transaction pooling mode:
#   scripts/pgbouncer-temp.sh <command> [args...]
# The cluster comes from scripts/postgres-temp.sh; PgBouncer (Debian package pgbouncer) listens on a unix socket in
# its own temp dir, serves every database of the cluster (a wildcard entry, so the suite's per-process databases
# need no configuration), and is stopped with the cluster when the command ends. The command gets
# TEST_DATABASE_URL pointing at PgBouncer, TEST_DIRECT_DATABASE_URL at the cluster, and DATABASE_POOLER=transaction.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command> [args...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${PGBOUNCER_TEMP_INNER:-}" ]; then
  PGBOUNCER_TEMP_INNER=1 exec "$here/postgres-temp.sh" "$0" "$@"
fi
unset PGBOUNCER_TEMP_INNER

if ! command -v pgbouncer >/dev/null; then
  echo "error: no pgbouncer on PATH. Install it (Debian/Ubuntu: apt-get install -y pgbouncer)." >&2
  exit 1
fi

# postgres-temp.sh's URL: the cluster's unix socket dir is its host parameter.
pg_dir=${TEST_DATABASE_URL##*host=}
AS=()
if [ "$(id -u)" -eq 0 ]; then AS=(runuser -u postgres --); fi

# Behind a transaction pooler the service cannot set session state: the role's defaults are what it checks for
# (src/db/postgres.ts). 15000 ms is DB_STATEMENT_TIMEOUT_MS's default, which the suite's apps use.
psql -X -q -v ON_ERROR_STOP=1 "$TEST_DATABASE_URL" \
  -c "ALTER ROLE postgres SET TimeZone = 'UTC'" -c "ALTER ROLE postgres SET statement_timeout = ${PGBOUNCER_TEMP_STATEMENT_TIMEOUT_MS:-15000}"

BOUNCER=$(mktemp -d "${TMPDIR:-/tmp}/pgbouncer.XXXXXX")
cat >"$BOUNCER/pgbouncer.ini" <<INI
[databases]
* = host=$pg_dir
[pgbouncer]
listen_addr =
listen_port = 6432
unix_socket_dir = $BOUNCER
pidfile = $BOUNCER/pgbouncer.pid
logfile = $BOUNCER/pgbouncer.log
auth_type = trust
auth_file = $BOUNCER/users.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
; pg sends extra_float_digits at start-up; PgBouncer would refuse the connection for an untracked parameter.
ignore_startup_parameters = extra_float_digits
INI
echo '"postgres" ""' >"$BOUNCER/users.txt"
if [ "${#AS[@]}" -gt 0 ]; then chown -R postgres "$BOUNCER"; fi
"${AS[@]}" pgbouncer -d -q "$BOUNCER/pgbouncer.ini" || { cat "$BOUNCER/pgbouncer.log" >&2; exit 1; }
cleanup() {
  if [ -f "$BOUNCER/pgbouncer.pid" ]; then kill "$(cat "$BOUNCER/pgbouncer.pid")" 2>/dev/null || true; fi
  rm -rf "$BOUNCER"
}
trap cleanup EXIT
for _ in $(seq 1 100); do [ -S "$BOUNCER/.s.PGSQL.6432" ] && break; sleep 0.1; done

# The cluster itself stays reachable, for what compares the two (the bench's PgBouncer scenarios).
export TEST_DIRECT_DATABASE_URL="$TEST_DATABASE_URL"
export TEST_DATABASE_URL="postgresql://postgres@localhost:6432/postgres?host=$BOUNCER"
export DATABASE_POOLER=transaction
echo "pgbouncer-temp: $(pgbouncer --version | head -1), transaction pooling, at $BOUNCER" >&2
"$@"
