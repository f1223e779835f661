#!/usr/bin/env bash
# The whole check: static checks, then the same tap suite on PGlite and on real PostgreSQL.
# Extra arguments go to both tap runs (e.g. `npm test -- test/db`).
set -euo pipefail
cd "$(dirname "$0")/.."

npm run -s typecheck
npm run -s lint:contract
npm run -s codegen -- --check

# Both engines run even when the first fails, so one run shows every failure.
status=0
echo "== tap suite on PGlite (in-memory) =="
# Coverage is measured once, in the PostgreSQL run (its report would replace this one's); it costs about 12% of a run.
env -u TEST_DATABASE_URL npx tap --disable-coverage "$@" || status=1

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "== tap suite on PostgreSQL (TEST_DATABASE_URL) =="
  npx tap "$@" || status=1
else
  echo "== tap suite on PostgreSQL (throwaway cluster from scripts/postgres-temp.sh) =="
  scripts/postgres-temp.sh npx tap "$@" || status=1
fi
exit "$status"
