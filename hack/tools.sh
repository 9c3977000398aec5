#!/usr/bin/env bash
# Builds the real third-party servers fluxpack's tests run against, from the Go
# module proxy, into the git-ignored .cache (keyed by version, so a rerun costs
# nothing). Usage: hack/tools.sh registry [more tools...]
#
# Every binary lands in .cache/tools/<name>-<version>/ and is linked from
# .cache/bin/<name>, where internal/testutil.Tool finds it.
set -euo pipefail
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FLUXPACK_CACHE:-$root/.cache}
mkdir -p "$cache/bin" "$cache/tools"

REGISTRY_VERSION=v3.1.2 # CNCF distribution

log() { echo "tools: $*" >&2; }

# link NAME DIR: point .cache/bin/NAME at DIR/NAME.
link() { ln -sfn "$2/$1" "$cache/bin/$1"; }

build_registry() {
  local dir=$cache/tools/registry-$REGISTRY_VERSION
  if [ ! -x "$dir/registry" ]; then
    log "building CNCF distribution registry $REGISTRY_VERSION (a few minutes, once)"
    mkdir -p "$dir"
    GOBIN=$dir go install "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
  fi
  link registry "$dir"
}

[ $# -gt 0 ] || set -- registry
for tool in "$@"; do
  case $tool in
    registry) build_registry ;;
    *) echo "tools: unknown tool $tool" >&2; exit 2 ;;
  esac
done
