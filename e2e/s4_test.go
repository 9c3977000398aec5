//go:build e2e

package e2e

import (
	"path/filepath"
	"testing"
)

// s4Layers are seed 004's Argo CD sync waves as layers: wave -2
// (external-dns, external-secrets), then wave -1 (ingress-nginx), then wave 0
// (the rest). Each layer waits for its workloads, as Argo CD waits for a
// wave to be healthy.
var s4Layers = []Layer{
	{Name: "external-dns", Wait: true},
	{Name: "external-secrets", Wait: true},
	{Name: "ingress-nginx", DependsOn: []string{"external-dns", "external-secrets"}, Wait: true},
	{Name: "kube-prometheus-stack", DependsOn: []string{"ingress-nginx"}, Wait: true},
	{Name: "aws-efs-csi-driver", DependsOn: []string{"ingress-nginx"}, Wait: true},
}

func TestS4ArgoCDWaves(t *testing.T) {
	c := StartCluster(t)
	d := Deploy(t, c, "s4", filepath.Join("testdata", "s4"), nil, s4Layers)
	d.RequireNoFailures(t)
	recordSummary("S4", "fluxpack: "+figuresLine(d.Figures))
	recordTable("S4 fluxpack", d)
}
