package bootstrap_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// A just module as home-ops repositories write their bootstrap stage: its
// folders in variables made from justfile_dir(), a template piped through
// a python3 -c script written over several lines before kubectl, another
// applied as it is. Found on a public repository (two false substitute-from
// findings: the Secrets the template makes were taken as made by no one).
func TestAppliedThroughJustModule(t *testing.T) {
	root := t.TempDir()
	module := `set shell := ['bash', '-euo', 'pipefail', '-c']

stage_dir := justfile_dir() + '/bootstrap'
apps_dir := justfile_dir() / "kubernetes" / 'apps'
talos := ` + "`talosctl config info -o yaml`" + `

[doc('Apply the resources')]
resources:
    just log info "applying" "stage" "$0"
    if ! just template "{{ stage_dir }}/resources.yaml.j2" | python3 -c 'import sys, yaml
for doc in yaml.safe_load_all(sys.stdin):
    if not doc:  # an empty document | none
        continue
    print("---")
    print(yaml.dump(doc))' | kubectl apply --server-side -f -; then \
        just log fatal "failed"; \
    fi

[doc('Apply the namespaces')]
namespaces:
    kubectl apply -f "{{apps_dir}}/namespaces.yaml"
    kubectl apply -f "{{ talos }}/talos.yaml"
`
	testutil.WriteFiles(t, root, map[string]string{
		".justfile":                            "mod bootstrap \"bootstrap\"\n\n[private]\ntemplate file:\n    minijinja-cli \"{{ file }}\" | op inject\n",
		"bootstrap/mod.just":                   module,
		"bootstrap/resources.yaml.j2":          "apiVersion: v1\nkind: Secret\nmetadata: {name: tunnel-id, namespace: network}\nstringData: {id: op://vault/item/id}\n",
		"kubernetes/apps/namespaces.yaml":      "apiVersion: v1\nkind: Namespace\nmetadata: {name: network}\n",
		"kubernetes/flux/cluster/cluster.yaml": "{}\n",
	})
	assert.ElementsMatch(t, []bootstrap.Manifest{
		{Path: filepath.Join(root, "bootstrap/resources.yaml.j2"), Through: []string{"python3"}},
		{Path: filepath.Join(root, "kubernetes/apps/namespaces.yaml")},
	}, bootstrap.Applied(root, filepath.Join(root, "kubernetes/flux/cluster")))
}

// A file one command applies as it is and another through a filter is
// applied as it is.
func TestAppliedAsItIsOnce(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{
		"bootstrap/bootstrap.sh": "sops -d bootstrap/s.yaml | envsubst | kubectl apply -f -\nsops -d bootstrap/s.yaml | kubectl apply -f -\n",
		"bootstrap/s.yaml":       "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: flux-system}\n",
	})
	assert.Equal(t, []bootstrap.Manifest{{Path: filepath.Join(root, "bootstrap/s.yaml")}}, bootstrap.Applied(root, ""))
	assert.Equal(t, []string{filepath.Join(root, "bootstrap/s.yaml")}, bootstrap.Manifests(root, ""))
}
