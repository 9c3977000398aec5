//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/layering"
)

// operatorStartup is how long the stand-in operator's pod takes to start
// serving its webhook once scheduled: the window in which the webhook is
// registered but refuses connections.
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

// startS0 starts a cluster whose stand-in operator serves its webhook only
// after operatorStartup, and returns it with the webhook and the files the
// operator layer needs besides the testdata.
func startS0(t *testing.T, m Mode) (*Cluster, *Webhook, map[string][]byte) {
	c := StartCluster(t, m)
	hook := NewWebhook(t)
	c.RunGatedPods(operatorStartup, hook.Serve)
	vwc, err := sigyaml.Marshal(hook.Configuration())
	require.NoError(t, err)
	return c, hook, map[string][]byte{"operator/webhook.yaml": vwc}
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
		c, hook, files := startS0(t, m)
		d := Deploy(t, c, "s0", tree, files, s0Layouts["fluxpack"]())
		d.RequireNoFailures(t)
		assert.Positive(t, hook.Requests(), "the webhook never validated a CR")
		recordRun("S0 fluxpack", d, "")

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
		c, _, files := startS0(t, m)
		d := Deploy(t, c, "s0", tree, files, s0Layouts["naive"]())
		note := requireNaiveRace(t, d, m, "namespaces", "crds", "operator", rootName)
		recordRun("S0 naive", d, note)
	})
}

// requireNaiveRace checks what a naive layout's crs layer did: with the
// fast flag it must fail calling the operator's webhook (the race of the
// seeds), and no other layer may fail. In stock Flux the 30s polling can
// hide the race (crs and operator are both retried half a minute later), so
// there a failure is reported, not required. It returns the note for the
// summary.
func requireNaiveRace(t *testing.T, d *Deployment, m Mode, others ...string) string {
	t.Helper()
	crs := d.Layers["crs"]
	for _, name := range others {
		require.Zero(t, d.Layers[name].Failures, "layer %q: %v", name, d.Layers[name].Messages)
	}
	msg := webhookFailure(append(crs.Messages, crs.WarningNotes...))
	if m == Fast {
		require.Positive(t, crs.Failures, "the naive layout did not fail: the webhook race was not reproduced")
		require.Contains(t, msg, "connection refused", "no failure of the naive crs layer says `failed calling webhook … connection refused`: %v %v", crs.Messages, crs.WarningNotes)
	}
	if crs.Failures == 0 {
		return "the race did not happen in this run"
	}
	if msg == "" {
		msg = strings.Join(crs.Messages, "; ")
	}
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
