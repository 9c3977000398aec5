#!/usr/bin/env bash
# Bootstraps every layout of the e2e on fresh clusters, RUNS times (default
# 10), and prints issue 44's table (hack/bootstrapbench): per layout every
# stock wall time, the worst, the critical path, worst ÷ critical path,
# worst ÷ the median with --requeue-dependency=1s, failed reconciles, and
# the machine's load (uptime) before and after each run. Not a timed test:
# nothing fails on a figure; a failed case fails the run.
#
# Each run is one `go test` process of the e2e binary (built once) running
# the layouts S0, S0 (Helm), S1, S1 (Helm), S3, S4 and R0 (clean), fluxpack's
# layout of each, in stock and fast mode, each on a cluster of its own,
# -parallel PARALLEL (default 2: the clusters share the machine, and a
# cluster that waits for a core is slower than its critical path says).
# MODES=stock skips the fast runs (then no fast median). The run folder,
# with each run's figures, load and log, is kept and printed.
#
#   RUNS=10 make bootstrap-bench
#
# The tools must be built (make e2e-tools test-bins).
set -euo pipefail
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-10}
PARALLEL=${PARALLEL:-2}
MODES=${MODES:-stock|fast}
RUN="^(TestS0ExternalSecrets|TestS0Helm|TestS1IaCBridge|TestS1Helm|TestS3PlatformHierarchy|TestS4ArgoCDWaves|TestRepository)\$/^($MODES)\$/^(fluxpack|clean)\$"

out=$(mktemp -d "${TMPDIR:-/tmp}/fluxpack-bootstrap-bench-XXXXXX")
trap 'rm -f "$out/e2e.test"' EXIT

echo "bootstrap-bench: compiling the e2e tests (go test -c; minutes the first time)" >&2
(cd "$root" && go build -o "$out/" ./hack/bootstrapbench && go test -c -tags e2e -o "$out/e2e.test" ./e2e/)

failed=0
for run in $(seq 1 "$RUNS"); do
  uptime >"$out/load-$run.txt"
  rc=0
  (cd "$root/e2e" && FLUXPACK_REQUIRE_REAL=1 FLUXPACK_TEST_BIN="${FLUXPACK_TEST_BIN:-$root/bin/test}" \
    FLUXPACK_E2E_FIGURES="$out/figures-$run.jsonl" FLUXPACK_E2E_SUMMARY="$out/summary-$run.txt" \
    "$out/e2e.test" -test.run "$RUN" -test.v -test.count=1 -test.parallel "$PARALLEL" -test.timeout 40m) >"$out/run-$run.log" 2>&1 || rc=$?
  uptime >>"$out/load-$run.txt"
  if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); fi
  echo "bootstrap-bench: run $run of $RUNS: exit $rc, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo -)" >&2
done

"$out/bootstrapbench" "$out"
echo
echo "bootstrap-bench: $RUNS runs, $failed failed (-parallel $PARALLEL); figures, loads and logs in $out"
[ "$failed" -eq 0 ]
