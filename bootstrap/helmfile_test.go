package bootstrap_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/bootstrap"
)

// templatedHelmfile is a helmfile v1 .gotmpl as repositories write one
// that read their charts' versions from their Flux manifests: actions
// alone on their lines at the top, and actions within values, quoted or
// not.
const templatedHelmfile = `---
{{- $root := requiredEnv "ROOT_DIR" }}
{{- $operator := readFile (printf "%s/apps/operator/ocirepository.yaml" $root) | fromYaml }}

helmDefaults:
  wait: true

releases:
  - name: operator
    namespace: operator-system
    chart: {{ $operator.spec.url }}
    version: "{{ $operator.spec.ref.tag }}"
    values: ['{{ $root }}/apps/operator/values.yaml']

  - name: cert-manager
    namespace: cert-manager
    chart: oci://quay.io/jetstack/charts/cert-manager
    installed: {{ env "CERT_MANAGER" | default "true" }}

  - name: tools
    namespace: {{ .Values.toolsNamespace }}
    chart: example/tools
    createNamespace: {{ .Values.create }}

  - name: cache
    namespace: cache
    chart: example/cache
    createNamespace: false
`

// A templated helmfile is read as far as its YAML goes once the template
// actions are left out: what a release's chart or namespace holds a
// template for is not known (a chart falls back on the release's name);
// a templated installed is helmfile's default, true; a templated
// createNamespace may be false, so the namespace is not known to exist.
func TestReadHelmfileTemplated(t *testing.T) {
	f := filepath.Join(t.TempDir(), "helmfile.yaml.gotmpl")
	require.NoError(t, os.WriteFile(f, []byte(templatedHelmfile), 0o600))
	releases, crdsOnly, err := bootstrap.ReadHelmfile(f)
	require.NoError(t, err)
	assert.False(t, crdsOnly)
	assert.Equal(t, []bootstrap.Release{
		{File: f, Chart: "operator", Namespace: "operator-system"},
		{File: f, Chart: "cert-manager", Namespace: "cert-manager"},
		{File: f, Chart: "tools"},
		{File: f, Chart: "cache"},
	}, releases)
}

// A helmfile that is YAML as written is read as written: a template in a
// quoted value stays what it is, and is not known.
func TestReadHelmfileQuotedTemplate(t *testing.T) {
	f := filepath.Join(t.TempDir(), "helmfile.yaml")
	require.NoError(t, os.WriteFile(f, []byte("releases:\n  - name: app\n    namespace: \"{{ .Values.ns }}\"\n    chart: \"{{ .Values.chart }}\"\n"), 0o600))
	releases, _, err := bootstrap.ReadHelmfile(f)
	require.NoError(t, err)
	assert.Equal(t, []bootstrap.Release{{File: f, Chart: "app"}}, releases)
}

// Helmfiles finds the templated helmfiles of a bootstrap folder:
// helmfile.yaml.gotmpl, and the .yaml.gotmpl files of helmfile.d/ that
// have releases.
func TestHelmfilesTemplated(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	top := write("kubernetes/bootstrap/helmfile.yaml.gotmpl", templatedHelmfile)
	apps := write("kubernetes/bootstrap/helmfile.d/01-apps.yaml.gotmpl", templatedHelmfile)
	write("kubernetes/bootstrap/helmfile.d/templates/values.yaml.gotmpl", "{{ .Values.x }}\n") // no releases
	write("kubernetes/flux/cluster/ks.yaml", "{}\n")
	assert.ElementsMatch(t, []string{top, apps}, bootstrap.Helmfiles(root, filepath.Join(root, "kubernetes", "flux", "cluster")))
}

// A repository with several clusters keeps each one's bootstrap step in
// a folder named after the cluster's (bootstrap/main/helmfile.d/ for
// kubernetes/main/flux/cluster): the entry point's cluster's are read, not
// another's. Found on a public repository with three clusters, where the
// step went unread and 84 CRD and webhook findings followed.
func TestHelmfilesOfEachCluster(t *testing.T) {
	root := t.TempDir()
	write := writer(t, &root)
	main := write("bootstrap/main/helmfile.d/01-apps.yaml", release("cert-manager"))
	network := write("bootstrap/network/helmfile.d/01-apps.yaml", release("external-dns"))
	write("kubernetes/main/flux/cluster/ks.yaml", "{}\n")
	write("kubernetes/network/flux/cluster/ks.yaml", "{}\n")
	assert.Equal(t, []string{main}, bootstrap.Helmfiles(root, filepath.Join(root, "kubernetes", "main", "flux", "cluster")))
	assert.Equal(t, []string{network}, bootstrap.Helmfiles(root, filepath.Join(root, "kubernetes", "network", "flux", "cluster")))
}

// A helmfile read again gives what its content says now: the same content
// gives the same releases (a caller's change to them stays the caller's),
// another content its own, and a file no longer YAML its error.
func TestReadHelmfileAgain(t *testing.T) {
	f := filepath.Join(t.TempDir(), "helmfile.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(f, []byte(s), 0o600)) }
	write("releases:\n  - name: a\n    namespace: x\n    chart: repo/a\n")
	first, _, err := bootstrap.ReadHelmfile(f)
	require.NoError(t, err)
	first[0].Chart = "changed by the caller"
	for range 2 {
		again, _, err := bootstrap.ReadHelmfile(f)
		require.NoError(t, err)
		assert.Equal(t, []bootstrap.Release{{File: f, Chart: "a", Namespace: "x"}}, again)
		again[0].Chart = "changed by the caller"
	}

	write("helmDefaults:\n  args: [--include-crds]\nreleases:\n  - name: b\n    namespace: y\n    chart: repo/b\n")
	changed, crdsOnly, err := bootstrap.ReadHelmfile(f)
	require.NoError(t, err)
	assert.True(t, crdsOnly)
	assert.Equal(t, []bootstrap.Release{{File: f, Chart: "b"}}, changed, "rendered for its CRDs only: no namespace made")

	write("releases: [\n")
	_, _, err = bootstrap.ReadHelmfile(f)
	assert.Error(t, err)
}

// A bootstrap folder may keep each step's helmfile in a folder of its own
// (bootstrap/crds/helmfile.yaml; bootstrap/apps/helmfile.yaml and
// bootstrap/apps/crds/helmfile.yaml): those are read, two levels down, but
// not a template's, another cluster's, nor a file without releases. Found
// on public repositories where the step went unread: the operators and
// CRDs it installs before Flux were reported missing, 144 lines on one.
func TestHelmfilesInStepFolders(t *testing.T) {
	root := t.TempDir()
	write := writer(t, &root)
	apps := write("kubernetes/bootstrap/apps/helmfile.yaml", release("external-secrets"))
	crds := write("kubernetes/bootstrap/apps/crds/helmfile.yaml", "helmDefaults:\n  args: [--include-crds]\n"+release("keda"))
	write("kubernetes/bootstrap/apps/crds/deeper/helmfile.yaml", release("too-deep"))
	write("kubernetes/bootstrap/templates/helmfile.yaml", release("template"))
	write("kubernetes/bootstrap/flux/kustomization.yaml", "resources: []\n")
	write("kubernetes/bootstrap/talos/helmfile.yaml", "repositories: []\n") // no releases
	// A namespace's folder named flux-system is not a cluster.
	write("kubernetes/apps/flux-system/flux-instance/ks.yaml", "{}\n")
	write("kubernetes/flux/ks.yaml", "{}\n")
	assert.Equal(t, []string{apps, crds}, bootstrap.Helmfiles(root, filepath.Join(root, "kubernetes", "flux")))
	_, crdsOnly, err := bootstrap.ReadHelmfile(crds)
	require.NoError(t, err)
	assert.True(t, crdsOnly)

	// Another cluster's step folder is left out; the cluster's own is read
	// once.
	root = t.TempDir()
	main := write("bootstrap/main/helmfile.yaml", release("cert-manager"))
	write("bootstrap/network/helmfile.yaml", release("external-dns"))
	write("bootstrap/network/crds/helmfile.yaml", release("external-dns-crds"))
	shared := write("bootstrap/crds/helmfile.yaml", release("prometheus-crds"))
	write("kubernetes/main/flux/cluster/ks.yaml", "{}\n")
	write("kubernetes/network/flux/cluster/ks.yaml", "{}\n")
	assert.Equal(t, []string{main, shared}, bootstrap.Helmfiles(root, filepath.Join(root, "kubernetes", "main", "flux", "cluster")))

	// flux bootstrap's layout: clusters/staging is another cluster.
	root = t.TempDir()
	write("clusters/production/flux-system/gotk-sync.yaml", "{}\n")
	write("clusters/staging/flux-system/gotk-sync.yaml", "{}\n")
	prod := write("bootstrap/production/helmfile.yaml", release("cert-manager"))
	write("bootstrap/staging/helmfile.yaml", release("cert-manager"))
	assert.Equal(t, []string{prod}, bootstrap.Helmfiles(root, filepath.Join(root, "clusters", "production")))

	// flux-operator's: clusters/staging holds what clusters/production
	// holds, and the bootstrap folder one folder per cluster.
	root = t.TempDir()
	write("clusters/production/flux-instance.yaml", "{}\n")
	write("clusters/staging/flux-instance.yaml", "{}\n")
	prod = write("bootstrap/production/helmfile.yaml", release("cert-manager"))
	write("bootstrap/staging/helmfile.yaml", release("cert-manager"))
	shared = write("bootstrap/crds/helmfile.yaml", release("prometheus-crds"))
	assert.Equal(t, []string{prod, shared}, bootstrap.Helmfiles(root, filepath.Join(root, "clusters", "production")))
}

// writer returns a function that writes a file below *root (read at each
// call) and returns its path.
func writer(t *testing.T, root *string) func(rel, text string) string {
	return func(rel, text string) string {
		p := filepath.Join(*root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
}

// release is a helmfile of one release, name, in the namespace of its name.
func release(name string) string {
	return "releases:\n  - name: " + name + "\n    namespace: " + name + "\n    chart: oci://example.com/charts/" + name + "\n"
}
