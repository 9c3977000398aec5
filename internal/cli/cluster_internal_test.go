package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/status"
)

// TestExplainerNamesTheMissingEdge: every ordering finding's missing edge
// (lint.Finding.DependOn) becomes status's edge and fix, whatever the
// rule's message says; a finding without one explains with its message.
func TestExplainerNamesTheMissingEdge(t *testing.T) {
	ex := findingsExplainer{
		{Rule: lint.RuleCRDOrder, Layer: "crs", File: "infra/crs/widget.yaml", Line: 4, LayerFile: "clusters/prod/crs.yaml", LayerLine: 2,
			Message: `the CRD of Widget (example.com) is in layer "crds", which this layer does not depend on`, DependOn: []string{"crds"}},
		{Rule: lint.RuleNamespaceOrder, Layer: "apps", Message: `namespace "web" is created by layer "infra", "base", which this layer does not depend on`, DependOn: []string{"infra", "base"}},
		{Rule: lint.RuleGraph, Layer: "broken", Message: "a cycle"},
	}
	for _, tt := range []struct {
		q    status.Query
		want status.Explanation
	}{
		{status.Query{Layer: status.Ref{Name: "crs"}, Rule: "crd-order"}, status.Explanation{Rule: "crd-order",
			Finding: `infra/crs/widget.yaml:4: the CRD of Widget (example.com) is in layer "crds", which this layer does not depend on`,
			Edge:    "crs dependsOn crds", Fix: `add "crds" to spec.dependsOn of layer "crs" (clusters/prod/crs.yaml:2)`}},
		{status.Query{Layer: status.Ref{Name: "apps"}, Rule: "namespace-order"}, status.Explanation{Rule: "namespace-order",
			Finding: `namespace "web" is created by layer "infra", "base", which this layer does not depend on`,
			Edge:    "apps dependsOn infra", Fix: `add "infra" to spec.dependsOn of layer "apps"`}},
		{status.Query{Layer: status.Ref{Name: "broken"}}, status.Explanation{Rule: "graph", Finding: "a cycle"}},
	} {
		got, ok := ex.Explain(tt.q)
		assert.True(t, ok, tt.q.Layer.Name)
		assert.Equal(t, tt.want, got, tt.q.Layer.Name)
	}
	_, ok := ex.Explain(status.Query{Layer: status.Ref{Name: "crs"}, Rule: "webhook-order"})
	assert.False(t, ok, "another rule's failure on the layer")
}
