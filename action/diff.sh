#!/usr/bin/env bash
# Runs fluxpack diff on every entry point of FLUXPACK_ENTRIES against
# FLUXPACK_BASE, writes the markdown report to $RUNNER_TEMP/fluxpack-diff.md,
# prints the report with workflow commands (annotations on new findings),
# and sets the step outputs changed and report.
set -euo pipefail

fluxpack="${FLUXPACK_BIN:-fluxpack}"
if ! command -v "$fluxpack" >/dev/null && [ -x "${RUNNER_TEMP:-}/fluxpack/bin/fluxpack" ]; then
  fluxpack="$RUNNER_TEMP/fluxpack/bin/fluxpack"
fi
shopt -s nullglob
entries=()
for pattern in ${FLUXPACK_ENTRIES:-clusters/*}; do
  for e in $pattern; do
    [ -e "$e" ] && entries+=("$e")
  done
done
if [ ${#entries[@]} -eq 0 ]; then
  echo "fluxpack: no entry point matches ${FLUXPACK_ENTRIES:-clusters/*}" >&2
  exit 2
fi
base=()
if [ -n "${FLUXPACK_BASE:-}" ]; then
  base=(--base "$FLUXPACK_BASE")
fi
# shellcheck disable=SC2206 # FLUXPACK_ARGS is split on purpose
args=(${FLUXPACK_ARGS:-})
report="${RUNNER_TEMP:-$(mktemp -d)}/fluxpack-diff.md"

code=0
# One review: the workflow commands on stdout, the markdown report beside.
"$fluxpack" diff "${entries[@]}" "${base[@]}" "${args[@]}" -o github --report "markdown=$report" || code=$?
if [ "$code" -gt 1 ]; then
  exit "$code"
fi
changed=false
if [ "$code" -eq 1 ]; then
  changed=true
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "changed=$changed"
    echo "report=$report"
  } >>"$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$report" >>"$GITHUB_STEP_SUMMARY"
fi
