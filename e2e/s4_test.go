//go:build e2e

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/fluxpack/fluxpack/layering"
)

// s4Layers are seed 004's Argo CD sync waves as layers: wave -2
// (external-dns, external-secrets), then wave -1 (ingress-nginx), then wave 0
// (the rest). Each layer waits for its workloads (layering's default), as
// Argo CD waits for a wave to be healthy.
func s4Layers() *layering.Builder {
	return stack().
		Layer("external-dns").
		Layer("external-secrets").
		Layer("ingress-nginx", layering.DependsOn("external-dns", "external-secrets")).
		Then("kube-prometheus-stack").
		Layer("aws-efs-csi-driver", layering.DependsOn("ingress-nginx"))
}

func TestS4ArgoCDWaves(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, m Mode) {
		c := StartCluster(t, m)
		d := Deploy(t, c, "s4", filepath.Join("testdata", "s4"), nil, s4Layers())
		d.RequireNoFailures(t)
		recordRun("S4 fluxpack", d, "")
	})
}
