package bootstrap_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// A bootstrap script as onedr0p's cluster-template writes it, run for one
// cluster of several: ROOT_DIR from git, the cluster from its argument,
// files in arrays applied in a loop, with kubectl or through sops
// exec-file. The entry point's cluster's files are read, another's not;
// a loop over what only running tells (a glob, a command) is not guessed.
// Found on a public repository with three clusters (six false
// substitute-from findings).
func TestManifestsThroughShellLoops(t *testing.T) {
	root := t.TempDir()
	script := `#!/usr/bin/env bash
set -euo pipefail
source "$(dirname "${0}")/lib/common.sh"
readonly CLUSTER="${1:?}"

function apply_configmaps() {
    local -r configmaps=(
        "${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-settings.yaml"
    )
    for configmap in "${configmaps[@]}"; do
        if kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename "${configmap}" &>/dev/null; then
            log info "applied"
        fi
    done
}

function apply_sops_secrets() {
    local -r secrets=(
        "${ROOT_DIR}/bootstrap/${CLUSTER}/age-key.sops.yaml"
        "${ROOT_DIR}/kubernetes/${CLUSTER}/vars/cluster-secrets.sops.yaml"
    )
    for secret in "${secrets[@]}"; do
        if sops exec-file "${secret}" "kubectl --context ${CLUSTER} --namespace flux-system apply --server-side --filename {}" &>/dev/null; then
            log info "applied"
        fi
    done
}

function apply_globbed() {
    local -r files=( "${ROOT_DIR}"/extra/*.yaml )
    for f in "${files[@]}"; do
        kubectl apply --filename "${f}"
    done
}
`
	testutil.WriteFiles(t, root, map[string]string{
		"scripts/lib/common.sh":                          "export ROOT_DIR=\"$(git rev-parse --show-toplevel)\"\n",
		"scripts/bootstrap-apps.sh":                      script,
		"kubernetes/main/vars/cluster-settings.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings}\n",
		"kubernetes/main/vars/cluster-secrets.sops.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: cluster-secrets, namespace: flux-system}\n",
		"kubernetes/main/flux/cluster/ks.yaml":           "{}\n",
		"kubernetes/network/vars/cluster-settings.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings}\n",
		"kubernetes/network/flux/cluster/ks.yaml":        "{}\n",
		"bootstrap/main/age-key.sops.yaml":               "apiVersion: v1\nkind: Secret\nmetadata: {name: sops-age, namespace: flux-system}\n",
		"extra/a.yaml":                                   "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
	})
	abs := func(rel ...string) []string {
		var out []string
		for _, r := range rel {
			out = append(out, filepath.Join(root, filepath.FromSlash(r)))
		}
		return out
	}
	assert.ElementsMatch(t, abs("kubernetes/main/vars/cluster-settings.yaml", "bootstrap/main/age-key.sops.yaml", "kubernetes/main/vars/cluster-secrets.sops.yaml"),
		bootstrap.Manifests(root, filepath.Join(root, "kubernetes/main/flux/cluster")))
	assert.ElementsMatch(t, abs("kubernetes/network/vars/cluster-settings.yaml"),
		bootstrap.Manifests(root, filepath.Join(root, "kubernetes/network/flux/cluster")))
}
