#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL primary with a synchronous standby and automatic failover:
#   scripts/postgres-ha.sh <command> [args...]
# pg_auto_failover (Debian postgresql-<v>-auto-failover and pg-auto-failover-cli, installed when missing as root):
# a monitor and two nodes on this machine, on localhost TCP ports POSTGRES_HA_PORT (default: random) + 0, 1, 2, each
# node's keeper in its own process group (so a drill can kill a node as a machine dies). Everything lives in a temp dir
# and is stopped and deleted when the command ends. The command gets
#   DATABASE_URL       both nodes, in libpq's multi-host form (the service connects to the writable one)
#   POSTGRES_HA_DIR    the temp dir: monitor/, node1/, node2/ (data dirs), node<n>.pgid, and `autoctl`, which runs
#                      pg_autoctl as the cluster's user (e.g. "$POSTGRES_HA_DIR/autoctl" show state --pgdata .../monitor)
# The monitor's health checks are tightened so that a dead primary is replaced within about 15 s instead of the
# defaults' 40 to 50 s (README "With a standby" says what shorter timeouts risk).
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command> [args...]" >&2
  exit 2
fi

find_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return; fi
  done
  echo "error: no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (Debian: apt-get install -y postgresql)." >&2
  exit 1
}
BINDIR=$(find_bindir)
PGVERSION=$(basename "$(dirname "$BINDIR")")

if ! command -v pg_autoctl >/dev/null || [ ! -e "/usr/lib/postgresql/$PGVERSION/lib/pgautofailover.so" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "error: pg_auto_failover is missing: apt-get install -y postgresql-$PGVERSION-auto-failover pg-auto-failover-cli" >&2
    exit 1
  fi
  echo "postgres-ha: installing pg_auto_failover" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$PGVERSION-auto-failover" pg-auto-failover-cli >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "postgresql-$PGVERSION-auto-failover" pg-auto-failover-cli >/dev/null; }
fi

HA=$(mktemp -d "${TMPDIR:-/tmp}/pgha.XXXXXX")
chmod 755 "$HA"
BASE=${POSTGRES_HA_PORT:-$((20000 + RANDOM % 20000))}
# pg_autoctl keeps its configuration and state under the XDG dirs: inside the temp dir, so nothing outlives it.
XDG=(env "XDG_CONFIG_HOME=$HA/xdg/config" "XDG_DATA_HOME=$HA/xdg/data" "XDG_RUNTIME_DIR=$HA/xdg/run" "PATH=$BINDIR:$PATH")
AS=()
if [ "$(id -u)" -eq 0 ]; then
  if ! id -u postgres >/dev/null 2>&1; then useradd --system --no-create-home --shell /usr/sbin/nologin postgres; fi
  AS=(runuser -u postgres --)
fi
cat >"$HA/autoctl" <<SH
#!/usr/bin/env bash
cd "$HA" && exec ${AS[*]} ${XDG[*]} pg_autoctl "\$@"
SH
chmod +x "$HA/autoctl"
mkdir -p "$HA/xdg/config" "$HA/xdg/data" "$HA/xdg/run"
if [ "${#AS[@]}" -gt 0 ]; then chown -R postgres "$HA"; fi

stop_servers() {
  local data
  for data in "$HA"/monitor "$HA"/node1 "$HA"/node2; do
    [ -d "$data" ] && (cd "$HA" && "${AS[@]}" "$BINDIR/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1) || true
  done
}
# Servers first, by pg_ctl: a postmaster killed with its keeper's group leaves the monitor's background workers
# running forever. Then the keepers, then whatever a keeper restarted meanwhile.
cleanup() {
  local pgid
  stop_servers
  for pgid in "$HA"/*.pgid; do [ -f "$pgid" ] && kill -KILL -- "-$(cat "$pgid")" 2>/dev/null || true; done
  stop_servers
  rm -rf "$HA"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# `pg_autoctl run` in its own session and process group, whose id is saved: a drill kills the group as a machine dies.
run_in_group() {
  local name=$1
  setsid "$HA/autoctl" run --pgdata "$HA/$name" >>"$HA/$name.log" 2>&1 &
  echo $! >"$HA/$name.pgid"
}

wait_for() {
  local what=$1; shift
  for _ in $(seq 1 240); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "postgres-ha: timed out waiting for $what" >&2
  tail -n 30 "$HA"/*.log >&2 || true
  exit 1
}

"$HA/autoctl" create monitor --pgdata "$HA/monitor" --pgport "$BASE" --hostname localhost --auth trust --no-ssl --pgctl "$BINDIR/pg_ctl" >"$HA/monitor.log" 2>&1 \
  || { cat "$HA/monitor.log" >&2; exit 1; }
run_in_group monitor
MONITOR="postgres://autoctl_node@localhost:$BASE/pg_auto_failover?sslmode=disable"
wait_for "the monitor" psql -X -q "postgres://postgres@localhost:$BASE/pg_auto_failover?sslmode=disable" -c 'select 1'
# Health checks every second and a node unhealthy after 6 s without news, instead of 5 s and 20 s; the primary's
# demotion is waited for 8 s, not 30 s (its keeper demotes it alone after network_partition_timeout, set below to 6 s).
psql -X -q -v ON_ERROR_STOP=1 "postgres://postgres@localhost:$BASE/pg_auto_failover?sslmode=disable" \
  -c "alter system set pgautofailover.health_check_period = 1000" \
  -c "alter system set pgautofailover.health_check_timeout = 1000" \
  -c "alter system set pgautofailover.health_check_max_retries = 2" \
  -c "alter system set pgautofailover.health_check_retry_delay = 500" \
  -c "alter system set pgautofailover.node_considered_unhealthy_timeout = 6000" \
  -c "alter system set pgautofailover.primary_demote_timeout = 8000" \
  -c "select pg_reload_conf()" >/dev/null

create_node() {
  local name=$1 port=$2
  "$HA/autoctl" create postgres --pgdata "$HA/$name" --pgport "$port" --hostname localhost --name "$name" --dbname app \
    --auth trust --no-ssl --monitor "$MONITOR" --pgctl "$BINDIR/pg_ctl" >>"$HA/$name.log" 2>&1 || { cat "$HA/$name.log" >&2; exit 1; }
  "$HA/autoctl" config set --pgdata "$HA/$name" timeout.network_partition_timeout 6 >/dev/null
  run_in_group "$name"
}
node_is() { "$HA/autoctl" show state --pgdata "$HA/monitor" --json | tr -d ' \n' | grep -q "\"nodename\":\"$1\"[^}]*\"current_group_state\":\"$2\""; }

create_node node1 $((BASE + 1))
wait_for "node1 to be the primary" node_is node1 single
create_node node2 $((BASE + 2))
wait_for "node2 to be the synchronous standby" node_is node2 secondary

export DATABASE_URL="postgresql://postgres@localhost:$((BASE + 1)),localhost:$((BASE + 2))/app?target_session_attrs=read-write"
export POSTGRES_HA_DIR=$HA
echo "postgres-ha: pg_auto_failover monitor on $BASE, node1 (primary) on $((BASE + 1)), node2 (standby) on $((BASE + 2)), at $HA" >&2
"$@"
