//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/cli"
)

// repoEntry is the entry point of the repository fixture: the folder the
// root Kustomization applies, as flux bootstrap's does for a cluster.
const repoEntry = "clusters/e2e"

// TestRepository is issue 15's proof: a Flux repository laid out as people
// publish them (e2e/testdata/repos/platform: Kustomizations under
// clusters/e2e reading infrastructure/ and apps/, variables from a ConfigMap
// of the cluster folder), linted with `fluxpack lint ENTRY`, pushed as it is
// with `fluxpack push`, its entry applied by a root Kustomization: every
// Kustomization of the tree Ready with zero failed reconciles. Its racy
// variant (the custom resources depend on the CRDs, not on the operator
// serving their webhook) is flagged by lint and fails in the cluster as
// lint said (seed 002's order: the operator applied on its own, the custom
// resources waiting for the CRDs only). Both run in the order startS0
// forces (the webhook configured, its server refusing, until the crs layer
// failed or waited) and carry the folder `fluxpack wake` writes for them,
// so that they bootstrap at controller speed in stock Flux too.
func TestRepository(t *testing.T) {
	t.Parallel()
	forEachMode(t, testRepository)
}

func testRepository(t *testing.T, m Mode) {
	for _, variant := range []string{"clean", "racy"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			// S0's forced order: the crs layer of the racy variant must
			// fail before the webhook serves, the clean one's wait.
			release := waitingForDependency
			if variant == "racy" {
				release = reconcileFailed
			}
			c, hook, files := startS0(t, m, release)
			dir := t.TempDir()
			copyTree(t, filepath.Join("testdata", "repos", "platform"), dir)
			// The operator's webhook is the test's server.
			writeFiles(t, dir, map[string][]byte{"infrastructure/operator/webhook.yaml": files["operator/webhook.yaml"]})
			if variant == "racy" {
				// Seed 002's order: the operator is applied on its own (its
				// HelmRelease in the seed), the custom resources wait for
				// the CRDs only.
				edit := func(file, from, to string) {
					p := filepath.Join(dir, repoEntry, file)
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					require.True(t, bytes.Contains(b, []byte(from)), "%s has no %q", file, from)
					require.NoError(t, os.WriteFile(p, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644))
				}
				edit("crs.yaml", "    - name: operator", "    - name: crds")
				edit("operator.yaml", "    - name: crds", "    - name: namespaces")
			}

			// Lint first, as CI would.
			var stdout, stderr bytes.Buffer
			code := cli.Main(t.Context(), "e2e", []string{"lint", filepath.Join(dir, repoEntry), "--root", dir,
				"--source", "OCIRepository/flux-system/" + rootName + "=" + dir}, &stdout, &stderr)
			if variant == "clean" {
				require.Equal(t, cli.ExitOK, code, "lint of the repository: %s%s", stdout.String(), stderr.String())
			} else {
				require.Equal(t, cli.ExitFinding, code, "lint of the racy repository: %s%s", stdout.String(), stderr.String())
				require.Contains(t, stdout.String(), `layer "crs" (clusters/e2e/crs.yaml:1)`)
				require.Contains(t, stdout.String(), "[webhook-order]")
			}

			// The folder `fluxpack wake` writes (clusters/e2e/wake, which
			// the entry applies: it has no kustomization.yaml) and its
			// Secret, applied out of band, outside the repository.
			secretFile := filepath.Join(t.TempDir(), "wake-secret.yaml")
			fluxpack(t, "wake", filepath.Join(dir, repoEntry), "-d", filepath.Join(dir, repoEntry, "wake"), "--root", dir,
				"--source", "OCIRepository/flux-system/"+rootName+"="+dir, "--secret-file", secretFile, "--receiver-url", c.ReceiverURL)
			applySecretFile(t, c, secretFile)

			repo, err := fluxrepo.Read(t.Context(), filepath.Join(dir, repoEntry), fluxrepo.WithRoot(dir),
				fluxrepo.WithSource(fluxrepo.SourceRef{Kind: "OCIRepository", Namespace: fluxNamespace, Name: rootName}, dir))
			require.NoError(t, err)
			var layers []string
			for _, l := range repo.Plan.Layers[1:] { // the first is the entry, the harness's root
				layers = append(layers, l.Name)
			}
			require.Equal(t, []string{"apps", "crds", "crs", "namespaces", "operator", "e2e-wake"}, layers)

			d := DeployEntry(t, c, "repo-"+variant, dir, repoEntry, layers)
			if variant == "clean" {
				d.RequireNoFailures(t)
				assert.Positive(t, hook.Requests(), "the webhook never validated a CR")
				var cm corev1.ConfigMap
				require.NoError(t, c.Client.Get(t.Context(), client.ObjectKey{Namespace: "external-secrets", Name: "settings"}, &cm))
				require.Equal(t, "e2e-cluster", cm.Data["cluster"], "the apps layer's ConfigMap carries the cluster folder's variables")
				recordRun("R0 clean", d, "lint 0 findings; the repository as written, plus fluxpack wake's folder; "+heldNote)
			} else {
				note := requireNaiveRace(t, d, "namespaces", "crds", "operator", "apps", rootName)
				recordRun("R0 racy", d, "lint webhook-order on crs; "+note)
			}
		})
	}
}

// applySecretFile creates the Secret a secret file holds (the wake
// Secret of `fluxpack wake`), as kubectl apply -f would.
func applySecretFile(t *testing.T, c *Cluster, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var s corev1.Secret
	require.NoError(t, sigyaml.Unmarshal(data, &s))
	require.Equal(t, "Secret", s.Kind)
	c.create(&s)
}
