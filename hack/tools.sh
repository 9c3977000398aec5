#!/usr/bin/env bash
# Builds the real third-party servers fluxpack's tests run against, from the Go
# module proxy, into the git-ignored .cache (keyed by version, so a rerun costs
# nothing). Usage: hack/tools.sh [registry|etcd|kubernetes|kwok|
# source-controller|kustomize-controller|helm-controller|notification-controller|
# flux|e2e ...]; "e2e" is what the e2e cases run (all but registry and
# golangci-lint).
#
# Every binary lands in .cache/tools/<name>-<version>/ and is linked from
# .cache/bin/<name>, where internal/testutil.Tool finds it. The Flux CRDs are
# copied from the controllers' modules into .cache/crds/ (linked the same way).
# Sources fetched to build are kept only in .cache/src and never committed.
set -euo pipefail
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FLUXPACK_CACHE:-$root/.cache}
mkdir -p "$cache/bin" "$cache/tools" "$cache/src" "$cache/crds"
# Links name the real folder: a worktree's .cache is often a link to the main
# checkout's, and must not leave links into a worktree that goes away.
cache=$(cd "$cache" && pwd -P)

REGISTRY_VERSION=v3.1.2             # CNCF distribution
GOLANGCI_LINT_VERSION=v2.15.0       # github.com/golangci/golangci-lint/v2
ETCD_VERSION=v3.6.16                # go.etcd.io/etcd/server/v3
KUBERNETES_VERSION=v1.37.2          # k8s.io/kubernetes; staging modules are v0.37.2
KWOK_VERSION=v0.8.0                 # sigs.k8s.io/kwok
# The newest Flux controllers that build from the module proxy here: v1.10.x
# need module versions the proxy refuses (403), as do source-controller
# v1.9.6's pkg/artifact v0.18.2+ (v0.18.1 builds and works) and
# kustomize-controller v1.9.6's pkg/kustomize v1.35.7.
SOURCE_CONTROLLER_VERSION=v1.9.6    # github.com/fluxcd/source-controller
SOURCE_CONTROLLER_REPLACES=(github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@v0.18.1)
KUSTOMIZE_CONTROLLER_VERSION=v1.9.5 # github.com/fluxcd/kustomize-controller
# Every kustomize-controller release pins kustomize/api and kyaml v0.21.1 with
# a replace; fluxpack has no replace (importers never see one), so its module
# graph selects v0.21.2 (fluxcd/pkg/kustomize v1.44.0 and pkg/ssa require it).
# The controller the e2e compares against is built with that same kustomize.
KUSTOMIZE_VERSION=v0.21.2           # sigs.k8s.io/kustomize/api and kyaml, as in go.mod
KUSTOMIZE_CONTROLLER_REPLACES=(sigs.k8s.io/kustomize/api=sigs.k8s.io/kustomize/api@$KUSTOMIZE_VERSION
  sigs.k8s.io/kustomize/kyaml=sigs.k8s.io/kustomize/kyaml@$KUSTOMIZE_VERSION)
# helm-controller v1.6.4 is the API flux v2.9.5 uses (v1.7.x and v1.5.3 are
# refused by the proxy here); notification-controller v1.9.3 likewise.
HELM_CONTROLLER_VERSION=v1.6.4      # github.com/fluxcd/helm-controller
HELM_CONTROLLER_REPLACES=()
NOTIFICATION_CONTROLLER_VERSION=v1.9.3 # github.com/fluxcd/notification-controller
NOTIFICATION_CONTROLLER_REPLACES=()
# The flux CLI, for the plugin test (flux plugin install, flux pack ...).
FLUX_VERSION=v2.9.5                 # github.com/fluxcd/flux2/v2
# The peer `make bench` times review against (flate diff ks --path-orig).
FLATE_VERSION=v0.6.5                # github.com/home-operations/flate

log() { echo "tools: $*" >&2; }

# link NAME DIR: point .cache/bin/NAME at DIR/NAME.
link() { ln -sfn "$2/$1" "$cache/bin/$1"; }

# timed LABEL CMD...: run CMD and log how long it took (cold-build figures).
timed() {
  local label=$1 start=$SECONDS
  shift
  "$@"
  log "$label built in $((SECONDS - start))s"
}

# moddir MODULE@VERSION: download a module through the proxy, print its dir.
moddir() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

build_registry() {
  local dir=$cache/tools/registry-$REGISTRY_VERSION
  if [ ! -x "$dir/registry" ]; then
    log "building CNCF distribution registry $REGISTRY_VERSION (a few minutes, once)"
    mkdir -p "$dir"
    timed registry env GOBIN="$dir" go install "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
  fi
  link registry "$dir"
}

build_flate() {
  local dir=$cache/tools/flate-$FLATE_VERSION
  if [ ! -x "$dir/flate" ]; then
    log "building flate $FLATE_VERSION, the peer make bench times (a minute or two, once)"
    mkdir -p "$dir"
    timed flate env GOBIN="$dir" CGO_ENABLED=0 go install -trimpath "github.com/home-operations/flate/cmd/flate@$FLATE_VERSION"
  fi
  link flate "$dir"
}

build_golangci_lint() {
  local dir=$cache/tools/golangci-lint-$GOLANGCI_LINT_VERSION
  if [ ! -x "$dir/golangci-lint" ]; then
    log "building golangci-lint $GOLANGCI_LINT_VERSION (a few minutes, once)"
    mkdir -p "$dir"
    timed golangci-lint env GOBIN="$dir" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
  fi
  link golangci-lint "$dir"
}

# wrapper DIR MODULE VERSION: write a throw-away main module in DIR that
# requires MODULE@VERSION, so `go build MODULE/...` builds its commands
# (go install refuses modules whose go.mod has replace directives).
wrapper() {
  local dir=$1 mod=$2 version=$3
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && go mod init fluxpack.local/tools >/dev/null 2>&1 && go mod edit -require="$mod@$version")
}

build_etcd() {
  local dir=$cache/tools/etcd-$ETCD_VERSION
  if [ ! -x "$dir/etcd" ]; then
    log "building etcd $ETCD_VERSION (about 2 minutes, once)"
    local src=$cache/src/etcd-$ETCD_VERSION
    wrapper "$src" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
    mkdir -p "$dir"
    (cd "$src" && timed etcd go build -mod=mod -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3)
    mv "$dir/etcd.tmp" "$dir/etcd"
  fi
  link etcd "$dir"
}

# build_kubernetes builds kube-apiserver, kube-controller-manager and
# kube-scheduler in one go build (they share most packages). kubernetes'
# go.mod replaces every staging module with ./staging/src/...; the wrapper
# replaces each with the published v0.X.Y of the same release instead.
build_kubernetes() {
  local dir=$cache/tools/kubernetes-$KUBERNETES_VERSION
  local bins=(kube-apiserver kube-controller-manager kube-scheduler)
  if [ ! -x "$dir/kube-scheduler" ]; then
    log "building kube-apiserver, kube-controller-manager, kube-scheduler $KUBERNETES_VERSION (about 5 minutes, once)"
    local src=$cache/src/kubernetes-$KUBERNETES_VERSION staging=v0.${KUBERNETES_VERSION#v1.}
    local kdir
    kdir=$(moddir "k8s.io/kubernetes@$KUBERNETES_VERSION")
    wrapper "$src" k8s.io/kubernetes "$KUBERNETES_VERSION"
    local mods
    mods=$(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*|\1|p' "$kdir/go.mod")
    [ -n "$mods" ] || { log "no staging replaces found in $kdir/go.mod"; exit 2; }
    for m in $mods; do
      (cd "$src" && go mod edit -replace="$m=$m@$staging")
    done
    mkdir -p "$dir/tmp"
    (cd "$src" && timed kubernetes go build -mod=mod -o "$dir/tmp/" "${bins[@]/#/k8s.io/kubernetes/cmd/}")
    for b in "${bins[@]}"; do mv "$dir/tmp/$b" "$dir/$b"; done
    rmdir "$dir/tmp"
  fi
  for b in "${bins[@]}"; do link "$b" "$dir"; done
}

# build_kwok builds kwok and writes the Stages it needs (kwok has none built
# in): nodes initialise and keep their lease, pods become Ready at once, as
# kwokctl's defaults do. They come from the module's kustomize/stage.
build_kwok() {
  local dir=$cache/tools/kwok-$KWOK_VERSION
  if [ ! -x "$dir/kwok" ] || [ ! -s "$dir/stages.yaml" ]; then
    log "building kwok $KWOK_VERSION (about 2 minutes, once)"
    mkdir -p "$dir"
    local mdir
    mdir=$(moddir "sigs.k8s.io/kwok@$KWOK_VERSION")
    local s=$mdir/kustomize/stage
    for f in "$s/node/fast/node-initialize.yaml" "$s/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
      "$s/pod/fast/pod-ready.yaml" "$s/pod/fast/pod-complete.yaml" "$s/pod/fast/pod-delete.yaml"; do
      echo "---"
      cat "$f"
    done >"$dir/stages.yaml"
    timed kwok env GOBIN="$dir" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  fi
  link kwok "$dir"
  ln -sfn "$dir/stages.yaml" "$cache/bin/kwok-stages.yaml"
}

# build_flux NAME VERSION [OLD=NEW@V...]: copy a Flux controller's module out
# of the module cache, drop the replace that points its api module at ./api
# (keeping the published api of the same version), add the given replaces,
# build it, and copy its CRDs.
build_flux() {
  local name=$1 version=$2
  shift 2
  # The replaces are part of the cache key: a binary built with other
  # dependencies is another binary.
  local key=$version
  [ $# -eq 0 ] || key=$version-$(printf '%s\n' "$@" | sha256sum | cut -c1-8)
  local dir=$cache/tools/$name-$key
  if [ ! -x "$dir/$name" ]; then
    log "building $name $version (about 2 minutes, once)"
    local mdir src=$cache/src/$name-$version
    mdir=$(moddir "github.com/fluxcd/$name@$version")
    rm -rf "$src" && mkdir -p "$(dirname "$src")"
    cp -r "$mdir" "$src" && chmod -R u+w "$src"
    (cd "$src" && go mod edit -dropreplace="github.com/fluxcd/$name/api" \
      -require="github.com/fluxcd/$name/api@$version")
    for r in "$@"; do (cd "$src" && go mod edit -replace="$r"); done
    mkdir -p "$dir/crds"
    cp "$src"/config/crd/bases/*.yaml "$dir/crds/"
    (cd "$src" && CGO_ENABLED=0 timed "$name" go build -mod=mod -o "$dir/$name.tmp" .)
    mv "$dir/$name.tmp" "$dir/$name"
  fi
  link "$name" "$dir"
  ln -sfn "$dir/crds" "$cache/crds/$name"
}

# build_flux_cli builds the flux CLI from github.com/fluxcd/flux2/v2. Its
# go.mod has a replace (go install refuses it), so the module is copied out
# and built in place. cmd/flux embeds the install manifests that flux2's
# release bundles from the controllers' releases (not in the module); a
# placeholder stands in, so this flux runs every command but install and
# bootstrap, which fluxpack's tests do not use.
build_flux_cli() {
  # Built with the kustomize fluxpack's go.mod selects, as kustomize-controller
  # is above: the preview tests compare fluxpack with `flux build`.
  local dir=$cache/tools/flux-$FLUX_VERSION-kustomize-$KUSTOMIZE_VERSION
  if [ ! -x "$dir/flux" ]; then
    log "building the flux CLI $FLUX_VERSION (a few minutes, once)"
    local mdir src=$cache/src/flux-$FLUX_VERSION
    mdir=$(moddir "github.com/fluxcd/flux2/v2@$FLUX_VERSION")
    rm -rf "$src" && mkdir -p "$(dirname "$src")"
    cp -r "$mdir" "$src" && chmod -R u+w "$src"
    mkdir -p "$src/cmd/flux/manifests"
    echo "# placeholder: built by fluxpack's hack/tools.sh without the install manifests" \
      >"$src/cmd/flux/manifests/placeholder.yaml"
    (cd "$src" && go mod edit -require="sigs.k8s.io/kustomize/api@$KUSTOMIZE_VERSION" \
      -require="sigs.k8s.io/kustomize/kyaml@$KUSTOMIZE_VERSION")
    mkdir -p "$dir"
    (cd "$src" && CGO_ENABLED=0 timed flux go build -mod=mod -trimpath \
      -ldflags "-X main.VERSION=${FLUX_VERSION#v}" -o "$dir/flux.tmp" ./cmd/flux)
    mv "$dir/flux.tmp" "$dir/flux"
  fi
  link flux "$dir"
}

[ $# -gt 0 ] || set -- registry
for tool in "$@"; do
  case $tool in
    registry) build_registry ;;
    golangci-lint) build_golangci_lint ;;
    flate) build_flate ;;
    flux) build_flux_cli ;;
    etcd) build_etcd ;;
    kubernetes) build_kubernetes ;;
    kwok) build_kwok ;;
    source-controller) build_flux source-controller "$SOURCE_CONTROLLER_VERSION" "${SOURCE_CONTROLLER_REPLACES[@]}" ;;
    kustomize-controller) build_flux kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION" "${KUSTOMIZE_CONTROLLER_REPLACES[@]}" ;;
    helm-controller) build_flux helm-controller "$HELM_CONTROLLER_VERSION" "${HELM_CONTROLLER_REPLACES[@]}" ;;
    notification-controller) build_flux notification-controller "$NOTIFICATION_CONTROLLER_VERSION" "${NOTIFICATION_CONTROLLER_REPLACES[@]}" ;;
    e2e)
      build_etcd
      build_kubernetes
      build_kwok
      build_flux source-controller "$SOURCE_CONTROLLER_VERSION" "${SOURCE_CONTROLLER_REPLACES[@]}"
      build_flux kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION" "${KUSTOMIZE_CONTROLLER_REPLACES[@]}"
      build_flux helm-controller "$HELM_CONTROLLER_VERSION" "${HELM_CONTROLLER_REPLACES[@]}"
      # Every cluster runs it: stock Flux's way to wake dependents (issue 17).
      build_flux notification-controller "$NOTIFICATION_CONTROLLER_VERSION" "${NOTIFICATION_CONTROLLER_REPLACES[@]}"
      # TestFluxPlugin installs and runs fluxpack through it (issue 18).
      build_flux_cli
      ;;
    *) echo "tools: unknown tool $tool" >&2; exit 2 ;;
  esac
done
