#!/usr/bin/env bash
# Installs the fluxpack release FLUXPACK_VERSION for this runner into
# $RUNNER_TEMP/fluxpack/bin and adds it to $GITHUB_PATH: the archive is
# downloaded from FLUXPACK_RELEASE_URL (default: the GitHub release) and
# checked against the release's checksums.txt before anything is unpacked.
set -euo pipefail

: "${FLUXPACK_VERSION:?set FLUXPACK_VERSION to a release tag, such as v0.4.0}"
base="${FLUXPACK_RELEASE_URL:-https://github.com/fluxpack/fluxpack/releases/download}/${FLUXPACK_VERSION}"
os="$(uname -s | tr '[:upper:]' '[:lower:]')"
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "fluxpack: no release for $(uname -m)" >&2; exit 2 ;;
esac
archive="flux-pack_${FLUXPACK_VERSION#v}_${os}_${arch}.tar.gz"
dir="${RUNNER_TEMP:-$(mktemp -d)}/fluxpack"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

curl -fsSL --retry 3 -o "$tmp/$archive" "$base/$archive"
curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/checksums.txt"
want="$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$tmp/checksums.txt")"
if [ -z "$want" ]; then
  echo "fluxpack: checksums.txt of $FLUXPACK_VERSION has no line for $archive" >&2
  exit 1
fi
got="$(sha256sum "$tmp/$archive" | cut -d' ' -f1)"
if [ "$want" != "$got" ]; then
  echo "fluxpack: $archive: sha256 $got, checksums.txt says $want" >&2
  exit 1
fi
mkdir -p "$dir/bin"
tar -xzf "$tmp/$archive" -C "$tmp" flux-pack
# -p keeps the archive's time: the build cache names the program by its
# file, so the next run's install of the same release reads this run's
# cache (action.yml keeps it across runs).
install -p -m 0755 "$tmp/flux-pack" "$dir/bin/fluxpack"
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dir/bin" >>"$GITHUB_PATH"
fi
"$dir/bin/fluxpack" version
