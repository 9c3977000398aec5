#!/usr/bin/env bash
# Runs e2e cases again and again, as a proof that they do not depend on
# timing: RUNS runs (default 20) of the cases RUN matches (default the S0
# cases, TestS0ExternalSecrets and TestS0Helm: both layouts, both modes),
# each a fresh `go test` process with -parallel PARALLEL (default 4), beside
# LOAD busy loops (default 0; `sh -c 'while :; do :; done'` at the script's
# own niceness, started here and killed by their process ids when the script
# ends; start your own to load the machine at another niceness). It prints one
# line per run, then a table per subtest (Test/mode/layout): runs, failures,
# min/median/max time. The test binary is built once (go test -c) and
# removed at the end; each run's log is kept only if a run failed.
#
#   LOAD=2 nice -n 10 hack/e2e-repeat.sh
#
# The tools must be built (make e2e-tools).
set -euo pipefail
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-20}
LOAD=${LOAD:-0}
PARALLEL=${PARALLEL:-4}
RUN=${RUN:-'^(TestS0ExternalSecrets|TestS0Helm)$'}

out=$(mktemp -d "${TMPDIR:-/tmp}/fluxpack-e2e-repeat-XXXXXX")
loads=()
failed=0
finish() {
  for pid in "${loads[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -f "$out/e2e.test"
  if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "e2e-repeat: logs of every run kept in $out" >&2; fi
}
trap finish EXIT

echo "e2e-repeat: compiling the e2e tests (go test -c; minutes the first time)" >&2
(cd "$root" && go test -c -tags e2e -o "$out/e2e.test" ./e2e/)

for _ in $(seq 1 "$LOAD"); do
  sh -c 'while :; do :; done' &
  loads+=("$!")
done
[ "$LOAD" -eq 0 ] || echo "e2e-repeat: $LOAD busy loops running (pids ${loads[*]})" >&2

results=$out/results.tsv # run, subtest, PASS|FAIL, seconds
: >"$results"
printf '%-4s %-6s %8s  %s\n' run result wall "load average (1 min) at the end"
for run in $(seq 1 "$RUNS"); do
  log=$out/run-$run.log
  start=$(date +%s.%N)
  rc=0
  (cd "$root/e2e" && FLUXPACK_REQUIRE_REAL=1 FLUXPACK_E2E_SUMMARY="$out/summary-$run.txt" \
    "$out/e2e.test" -test.run "$RUN" -test.v -test.count=1 -test.parallel "$PARALLEL" -test.timeout 40m) >"$log" 2>&1 || rc=$?
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
  # Leaf subtests only (Test/mode/layout): "--- PASS: TestS0Helm/fast/naive (35.12s)".
  sed -nE 's/^ *--- (PASS|FAIL): ([^ /]+\/[^ /]+\/[^ ]+) \(([0-9.]+)s\)$/\2\t\1\t\3/p' "$log" |
    awk -v run="$run" '{print run "\t" $0}' >>"$results"
  result=PASS
  if [ "$rc" -ne 0 ]; then result=FAIL; failed=$((failed + 1)); fi
  printf '%-4s %-6s %7.1fs  %s\n' "$run" "$result" "$wall" "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)"
done

echo
printf '%-36s %4s %8s %8s %8s %8s\n' subtest runs failures min median max
cut -f2 "$results" | sort -u | while read -r name; do
  awk -F'\t' -v n="$name" '$2 == n' "$results" >"$out/one.tsv"
  runs=$(wc -l <"$out/one.tsv")
  fails=$(awk -F'\t' '$3 == "FAIL"' "$out/one.tsv" | wc -l)
  times=$(cut -f4 "$out/one.tsv" | sort -g)
  min=$(head -1 <<<"$times")
  max=$(tail -1 <<<"$times")
  median=$(awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}' <<<"$times")
  printf '%-36s %4d %8d %7.1fs %7.1fs %7.1fs\n' "$name" "$runs" "$fails" "$min" "$median" "$max"
done
echo
echo "e2e-repeat: $RUNS runs, $failed failed (LOAD=$LOAD busy loops, -parallel $PARALLEL, -run '$RUN')"
[ "$failed" -eq 0 ]
