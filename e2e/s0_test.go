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
		return stack().
			Layer("namespaces").
			Then("crds").
			Layer("operator", layering.DependsOn("namespaces")).
			Layer("crs", layering.DependsOn("crds"), layering.RetryInterval(10*time.Second))
	},
}

// startS0 starts a cluster whose stand-in operator serves its webhook only
// after operatorStartup, and returns it with the webhook and the files the
// operator layer needs besides the testdata.
func startS0(t *testing.T) (*Cluster, *Webhook, map[string][]byte) {
	c := StartCluster(t)
	hook := NewWebhook(t)
	c.RunGatedPods(operatorStartup, hook.Serve)
	vwc, err := sigyaml.Marshal(hook.Configuration())
	require.NoError(t, err)
	return c, hook, map[string][]byte{"operator/webhook.yaml": vwc}
}

func TestS0ExternalSecrets(t *testing.T) {
	t.Parallel()
	tree := filepath.Join("testdata", "s0")
	// Each layout runs in a cluster of its own, in parallel; the summary line
	// is recorded once both have finished (the parent's cleanup runs after
	// its parallel subtests).
	var line [2]string
	t.Cleanup(func() {
		if line[0] != "" && line[1] != "" {
			recordSummary("S0", line[0]+" | "+line[1])
		}
	})

	t.Run("fluxpack", func(t *testing.T) {
		t.Parallel()
		c, hook, files := startS0(t)
		d := Deploy(t, c, "s0", tree, files, s0Layouts["fluxpack"]())
		d.RequireNoFailures(t)
		assert.Positive(t, hook.Requests(), "the webhook never validated a CR")
		line[0] = "fluxpack: " + figuresLine(d.Figures)

		// A changed push (a new CR) reaches the cluster; an unchanged one is a no-op.
		d.RequireUpdates(t, "s0",
			func(dir string) {
				writeFiles(t, dir, map[string][]byte{"crs/second.yaml": []byte(secondExternalSecret)})
			},
			func(ctx context.Context) (bool, error) {
				return exists(ctx, c, "external-secrets.io/v1", "ExternalSecret", "external-secrets", "second-push")
			})
		recordTable("S0 fluxpack", d)
	})

	t.Run("naive", func(t *testing.T) {
		t.Parallel()
		c, _, files := startS0(t)
		d := Deploy(t, c, "s0", tree, files, s0Layouts["naive"]())
		crs := d.Layers["crs"]
		require.Positive(t, crs.Failures, "the naive layout did not fail: the webhook race was not reproduced")
		var seen bool
		for _, m := range append(crs.Messages, crs.WarningNotes...) {
			if strings.Contains(m, "failed calling webhook") && strings.Contains(m, "connection refused") {
				seen = true
			}
		}
		require.True(t, seen, "no failure of the naive crs layer says `failed calling webhook … connection refused`: %v %v", crs.Messages, crs.WarningNotes)
		for _, name := range []string{"namespaces", "crds", "operator", rootName} {
			require.Zero(t, d.Layers[name].Failures, "layer %q: %v", name, d.Layers[name].Messages)
		}
		line[1] = "naive: " + figuresLine(d.Figures) + " (" + webhookFailure(crs.Messages) + ")"
		recordTable("S0 naive", d)
	})
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
