#!/usr/bin/env bash
# Posts FLUXPACK_REPORT as one comment on pull request FLUXPACK_PR of
# GITHUB_REPOSITORY, or updates the comment an earlier run posted (found by
# its marker), so a pull request carries one report, the latest.
set -euo pipefail

: "${GITHUB_TOKEN:?}" "${GITHUB_REPOSITORY:?}" "${FLUXPACK_PR:?}" "${FLUXPACK_REPORT:?}"
api="${GITHUB_API_URL:-https://api.github.com}"
marker='<!-- fluxpack-diff -->'
body="$(printf '%s\n%s' "$marker" "$(cat "$FLUXPACK_REPORT")" | jq -Rs '{body: .}')"
auth=(-H "Authorization: Bearer $GITHUB_TOKEN" -H "Accept: application/vnd.github+json" -H "X-GitHub-Api-Version: 2022-11-28")

id=""
page=1
while [ -z "$id" ]; do
  comments="$(curl -fsSL "${auth[@]}" "$api/repos/$GITHUB_REPOSITORY/issues/$FLUXPACK_PR/comments?per_page=100&page=$page")"
  [ "$(jq length <<<"$comments")" -eq 0 ] && break
  id="$(jq -r --arg m "$marker" '[.[] | select(.body | startswith($m))][0].id // empty' <<<"$comments")"
  page=$((page + 1))
done
if [ -n "$id" ]; then
  curl -fsSL -X PATCH "${auth[@]}" -d "$body" "$api/repos/$GITHUB_REPOSITORY/issues/comments/$id" >/dev/null
  echo "fluxpack: updated comment $id on #$FLUXPACK_PR"
else
  curl -fsSL -X POST "${auth[@]}" -d "$body" "$api/repos/$GITHUB_REPOSITORY/issues/$FLUXPACK_PR/comments" >/dev/null
  echo "fluxpack: commented on #$FLUXPACK_PR"
fi
