#!/usr/bin/env bash
# The whole check: static checks, then the same tap suite on PGlite and on real PostgreSQL, then the suites that
# share state across connections (gateway, idempotency, limits, webhooks, governed queries, the store) on PostgreSQL
# behind PgBouncer in transaction pooling mode.
# Extra arguments go to every tap run (e.g. `npm test -- test/db/engines.test.ts`).
# TEST_ENGINES picks the runs (pglite, postgresql, pgbouncer; all three by default).
set -euo pipefail
cd "$(dirname "$0")/.."

engines=${TEST_ENGINES:-pglite postgresql pgbouncer}
for engine in $engines; do
  case $engine in
    pglite | postgresql | pgbouncer) ;;
    *) echo "TEST_ENGINES: unknown engine '$engine' (pglite, postgresql, pgbouncer)" >&2; exit 2 ;;
  esac
done
wants() { [[ " $engines " == *" $1 "* ]]; }

npm run -s typecheck
npm run -s format:check
npm run -s lint
npm run -s lint:layers
npm run -s lint:contract
npm run -s codegen -- --check
npm run -s generate -w clients/typescript -- --check
npm run -s generate:python -- --check
if command -v mypy >/dev/null || [ -n "${CI:-}" ]; then
  npm run -s typecheck:python
else
  echo "mypy not installed (Debian package mypy): the Python client is not type-checked" >&2
fi
npm run -s contract:check

# Both engines run even when the first fails, so one run shows every failure.
# Each failed run's failures are printed again at the very end, where a log cut to its tail still shows them.
failures=$(mktemp)
trap 'rm -f "$failures"' EXIT
status=0
run_suite() {
  local engine=$1
  shift
  if ! "$@"; then
    status=1
    echo "== failures on $engine ==" >>"$failures"
    for file in $(grep -r -l '^ *not ok' .tap/test-results); do
      echo "-- ${file#.tap/test-results/}"
      grep -A 24 '^ *not ok' "$file"
    done | head -400 >>"$failures" || true
  fi
}

node=$(node --version)
if wants pglite; then
  echo "== tap suite on PGlite (in-memory), Node $node =="
  run_suite "PGlite, Node $node" env -u TEST_DATABASE_URL npx tap "$@"
fi

if wants postgresql && [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "== tap suite on PostgreSQL (TEST_DATABASE_URL), Node $node =="
  run_suite "PostgreSQL, Node $node" npx tap "$@"
elif wants postgresql; then
  echo "== tap suite on PostgreSQL (throwaway cluster from scripts/postgres-temp.sh), Node $node =="
  run_suite "PostgreSQL, Node $node" scripts/postgres-temp.sh npx tap "$@"
fi
if wants pgbouncer; then
  pooled=("$@")
  if [ ${#pooled[@]} -eq 0 ]; then
    pooled=(test/gateway/*.test.ts test/workers/*.test.ts test/resources/queries/*.test.ts test/resources/query-tokens/*.test.ts test/db/*.test.ts test/mcp/token-reuse.test.ts)
  fi
  echo "== tap suite on PostgreSQL behind PgBouncer, transaction pooling (scripts/pgbouncer-temp.sh), Node $node =="
  run_suite "PgBouncer, Node $node" env -u TEST_DATABASE_URL scripts/pgbouncer-temp.sh npx tap "${pooled[@]}"
fi
cat "$failures"
exit "$status"
