#!/usr/bin/env bash
# GitLab CI: runs fluxpack diff on the merge request's clusters against its
# target branch and posts the markdown report as one merge-request note,
# updated by later pipelines. See docs/gitlab-ci.md for the job.
set -euo pipefail

: "${CI_API_V4_URL:?}" "${CI_PROJECT_ID:?}" "${CI_MERGE_REQUEST_IID:?}" "${FLUXPACK_GITLAB_TOKEN:?a project access token with api scope}"
fluxpack="${FLUXPACK_BIN:-fluxpack}"
base="${FLUXPACK_BASE:-${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}}"
shopt -s nullglob
entries=()
for pattern in ${FLUXPACK_ENTRIES:-clusters/*}; do
  for e in $pattern; do
    [ -e "$e" ] && entries+=("$e")
  done
done
[ ${#entries[@]} -gt 0 ] || { echo "fluxpack: no entry point matches ${FLUXPACK_ENTRIES:-clusters/*}" >&2; exit 2; }
args=()
[ -n "$base" ] && args=(--base "$base")
# shellcheck disable=SC2206 # FLUXPACK_ARGS is split on purpose
args+=(${FLUXPACK_ARGS:-})

report="$(mktemp)"
trap 'rm -f "$report"' EXIT
code=0
"$fluxpack" diff "${entries[@]}" "${args[@]}" -o markdown >"$report" || code=$?
[ "$code" -le 1 ] || exit "$code"

marker='<!-- fluxpack-diff -->'
body="$(printf '%s\n%s' "$marker" "$(cat "$report")" | jq -Rs '{body: .}')"
notes="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes"
auth=(-H "PRIVATE-TOKEN: $FLUXPACK_GITLAB_TOKEN" -H "Content-Type: application/json")
id="$(curl -fsSL "${auth[@]}" "$notes?per_page=100&sort=asc" | jq -r --arg m "$marker" '[.[] | select(.body | startswith($m))][0].id // empty')"
if [ -n "$id" ]; then
  curl -fsSL -X PUT "${auth[@]}" -d "$body" "$notes/$id" >/dev/null
  echo "fluxpack: updated note $id on !$CI_MERGE_REQUEST_IID"
else
  curl -fsSL -X POST "${auth[@]}" -d "$body" "$notes" >/dev/null
  echo "fluxpack: noted !$CI_MERGE_REQUEST_IID"
fi
