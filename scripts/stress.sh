#!/usr/bin/env bash
# `npm run test:stress [-- FILE...]`: the timing-sensitive tests, RUNS times in a row (default 20),
# each run with two busy loops beside it, so a test that passes only on an idle machine shows it.
# Without files it runs the list below. Prints each run's outcome, then "N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-20}
# Pacing, fairness, the shared rate limit, slow clients, revocation races, restarts, the relay
# after Redis lost every job: each depends on time passing as the rule says, under load.
DEFAULT_FILES=(
  test/events/pacing.e2e.test.ts
  test/events/fairness.e2e.test.ts
  test/api/sharedRateLimit.e2e.test.ts
  test/api/slowClients.test.ts
  test/api/revocationRace.test.ts
  test/faults/embeddedRestart.test.ts
  test/faults/redisOutage.test.ts
  test/workers/pacerLead.test.ts
  test/workers/lateClaim.test.ts
  test/workers/paceWindow.test.ts
)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("${DEFAULT_FILES[@]}")

busy=()
stop_busy() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for _ in 1 2; do
  node -e 'for (;;);' &
  busy+=($!)
done

passed=0
failed=0
for run in $(seq 1 "$RUNS"); do
  log=".ci/stress-${run}.log"
  if npx vitest run "${files[@]}" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "run ${run}: passed"
    rm -f "$log"
  else
    failed=$((failed + 1))
    echo "run ${run}: FAILED (${log}):"
    grep -E '(FAIL|×|✗) ' "$log" | head -10 || true
  fi
done
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
