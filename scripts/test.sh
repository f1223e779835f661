#!/usr/bin/env bash
# The whole check: static checks, then the same tap suite on PGlite and on real PostgreSQL.
# Extra arguments go to both tap runs (e.g. `npm test -- test/db`).
# TEST_ENGINES=pglite (or postgresql) runs one engine's suite: .ci/run runs the PGlite one again on Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."

engines=${TEST_ENGINES:-pglite postgresql}
for engine in $engines; do
  case $engine in
    pglite | postgresql) ;;
    *) echo "TEST_ENGINES: unknown engine '$engine' (pglite, postgresql)" >&2; exit 2 ;;
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
cat "$failures"
exit "$status"
