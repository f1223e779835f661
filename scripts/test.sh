#!/usr/bin/env bash
# The whole check: static checks, then the same tap suite on PGlite and on real PostgreSQL.
# Extra arguments go to both tap runs (e.g. `npm test -- test/db`).
set -euo pipefail
cd "$(dirname "$0")/.."

npm run -s typecheck
npm run -s lint:contract
npm run -s codegen -- --check

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

echo "== tap suite on PGlite (in-memory) =="
# Coverage is measured once, in the PostgreSQL run (its report would replace this one's); it costs about 12% of a run.
run_suite PGlite env -u TEST_DATABASE_URL npx tap --disable-coverage "$@"

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "== tap suite on PostgreSQL (TEST_DATABASE_URL) =="
  run_suite PostgreSQL npx tap "$@"
else
  echo "== tap suite on PostgreSQL (throwaway cluster from scripts/postgres-temp.sh) =="
  run_suite PostgreSQL scripts/postgres-temp.sh npx tap "$@"
fi
cat "$failures"
exit "$status"
