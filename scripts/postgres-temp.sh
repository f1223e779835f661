#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster:
#   scripts/postgres-temp.sh <command> [args...]
# The cluster lives in a temp dir, listens only on a unix socket there (no TCP port to collide on),
# trusts local connections, and is stopped and deleted when the command ends.
# The command gets TEST_DATABASE_URL (superuser "postgres", database "postgres").
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command> [args...]" >&2
  exit 2
fi

find_bindir() {
  local dir
  # Newest server first; a client-only package leaves a bin dir without initdb/pg_ctl.
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV) "$(dirname "$(readlink -f "$(command -v pg_ctl || echo /nonexistent)")")"; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return; fi
  done
  echo "error: no PostgreSQL server binaries (initdb, pg_ctl) found in /usr/lib/postgresql/*/bin or on PATH." >&2
  echo "Install them (Debian/Ubuntu: apt-get install -y postgresql) or set TEST_DATABASE_URL to a superuser URL of a running server." >&2
  exit 1
}

BINDIR=$(find_bindir)

# PostgreSQL refuses to run as root: run the server as the "postgres" user the Debian package creates.
AS=()
if [ "$(id -u)" -eq 0 ]; then
  if ! id -u postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres
  fi
  AS=(runuser -u postgres --)
fi

PGTMP=$(mktemp -d "${TMPDIR:-/tmp}/pgtemp.XXXXXX")
# From inside the temp dir: the server user may not be allowed into the caller's working directory.
server() { (cd "$PGTMP" && "${AS[@]}" "$@"); }
cleanup() {
  server "$BINDIR/pg_ctl" -D "$PGTMP/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PGTMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ "${#AS[@]}" -gt 0 ]; then chown postgres "$PGTMP"; fi

server "$BINDIR/initdb" -D "$PGTMP/data" -U postgres --auth=trust --encoding=UTF8 --locale=C --no-sync >"$PGTMP/initdb.log" 2>&1 \
  || { cat "$PGTMP/initdb.log" >&2; exit 1; }

# Durability is pointless for a cluster deleted at exit; turning it off makes the suite faster.
if ! server "$BINDIR/pg_ctl" -D "$PGTMP/data" -l "$PGTMP/server.log" -w -t 60 start \
  -o "-c listen_addresses='' -k $PGTMP -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null; then
  cat "$PGTMP/server.log" >&2
  exit 1
fi

export TEST_DATABASE_URL="postgresql://postgres@localhost/postgres?host=$PGTMP"
echo "postgres-temp: $("$BINDIR/postgres" --version) at $PGTMP" >&2
"$@"
