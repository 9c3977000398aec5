//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/layering"
)

// operatorStartup is how long the stand-in operator's pod takes at least to
// start serving its webhook once scheduled; it never serves before the
// test releases it (see startS0).
const operatorStartup = 10 * time.Second

// s0Layouts are the two layouts of seeds 000 and 002, built with package
// layering; in both the namespace comes first (the seed's main
// kustomization). fluxpack's chain makes the CRs wait for the operator
// (marked as such, wait: true, so for its webhook's pod); the naive layout of
// seed 002 makes them wait for the CRDs only, while the operator is applied
// independently (its HelmRelease in the seed), and retries after 10s.
var s0Layouts = map[string]func() *layering.Builder{
	"fluxpack": func() *layering.Builder {
		return stack().
			Layer("namespaces").
			Then("crds").
			Then("operator", layering.MarkOperator()).
			Layer("crs", layering.DependsOnOperator())
	},
	"naive": func() *layering.Builder {
		return handStack().
			Layer("namespaces").
			Then("crds").
			Layer("operator", layering.DependsOn("namespaces")).
			Layer("crs", layering.DependsOn("crds"), layering.RetryInterval(10*time.Second))
	},
}

// startS0 starts a cluster for one layout of seed 000's race and forces the
// race's order: the operator's webhook configuration is in the cluster
// before anything is applied, and the stand-in operator's pod does not
// serve its webhook (connections to it are refused) until the crs layer has
// been seen in the state release reports: reconcileFailed for a naive
// layout (its custom resources were refused), waitingForDependency for a
// fixed one (its dependsOn held them back). It returns the cluster with the
// webhook and the files the operator layer needs besides the testdata (the
// same webhook configuration, which that layer applies over the test's).
func startS0(t *testing.T, m Mode, release func(*kustomizev1.Kustomization) bool) (*Cluster, *Webhook, map[string][]byte) {
	c := StartCluster(t, m)
	hook := NewWebhook(t)
	c.RunGatedPods(operatorStartup, c.HoldUntil("crs", release), hook.Serve)
	vwc := hook.Configuration()
	c.create(vwc.DeepCopy())
	b, err := sigyaml.Marshal(vwc)
	require.NoError(t, err)
	return c, hook, map[string][]byte{"operator/webhook.yaml": b}
}

func TestS0ExternalSecrets(t *testing.T) {
	t.Parallel()
	forEachMode(t, testS0)
}

// testS0 runs both layouts, each in a cluster of its own, in parallel.
func testS0(t *testing.T, m Mode) {
	tree := filepath.Join("testdata", "s0")
	t.Run("fluxpack", func(t *testing.T) {
		t.Parallel()
		c, hook, files := startS0(t, m, waitingForDependency)
		d := Deploy(t, c, "s0", tree, files, s0Layouts["fluxpack"]())
		d.RequireNoFailures(t)
		assert.Positive(t, hook.Requests(), "the webhook never validated a CR")
		recordRun("S0 fluxpack", d, heldNote)

		// A changed push (a new CR) reaches the cluster; an unchanged one is a no-op.
		d.RequireUpdates(t, "s0",
			func(dir string) {
				writeFiles(t, dir, map[string][]byte{"crs/second.yaml": []byte(secondExternalSecret)})
			},
			func(ctx context.Context) (bool, error) {
				return exists(ctx, c, "external-secrets.io/v1", "ExternalSecret", "external-secrets", "second-push")
			})
	})

	t.Run("naive", func(t *testing.T) {
		t.Parallel()
		c, _, files := startS0(t, m, reconcileFailed)
		d := Deploy(t, c, "s0", tree, files, s0Layouts["naive"]())
		note := requireNaiveRace(t, d, "namespaces", "crds", "operator", rootName)
		recordRun("S0 naive", d, note)
	})
}

// heldNote is the summary note of a fixed layout run in the order startS0
// forces.
const heldNote = "crs held back by dependsOn while the webhook refused"

// requireNaiveRace checks what a naive layout's crs layer did, in the
// order startS0 forces: it must have failed calling the operator's webhook
// (the race of the seeds), in stock Flux as with the fast flag, and no
// other layer may fail. It returns the note for the summary.
func requireNaiveRace(t *testing.T, d *Deployment, others ...string) string {
	t.Helper()
	crs := d.Layers["crs"]
	for _, name := range others {
		require.Zero(t, d.Layers[name].Failures, "layer %q: %v", name, d.Layers[name].Messages)
	}
	msg := webhookFailure(append(crs.Messages, crs.WarningNotes...))
	require.Positive(t, crs.Failures, "the naive layout did not fail, though its custom resources were applied while the webhook refused")
	require.Contains(t, msg, "connection refused", "no failure of the naive crs layer says `failed calling webhook … connection refused`: %v %v", crs.Messages, crs.WarningNotes)
	return msg
}

// webhookFailure shortens the first failure calling the webhook to
// `failed calling webhook "name": … connection refused`.
func webhookFailure(msgs []string) string {
	for _, m := range msgs {
		i := strings.Index(m, "failed calling webhook")
		if i < 0 {
			continue
		}
		m = m[i:]
		name, rest, _ := strings.Cut(m, ": ")
		if j := strings.Index(rest, "connection refused"); j >= 0 {
			return name + ": … connection refused"
		}
		return m
	}
	return ""
}

const secondExternalSecret = `apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: second-push
  namespace: external-secrets
spec:
  secretStoreRef:
    kind: ClusterSecretStore
    name: vault-backend
  target:
    name: second-push
  data:
    - secretKey: token
      remoteRef:
        key: app/token
`
