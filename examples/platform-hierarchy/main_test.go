package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// seedTree is seed 003's hierarchy (its `flux tree kustomization apps`)
// read from the root down, in bootstrap order, as graph draws it.
const seedTree = `Kustomization/flux-system/namespaces
└── Kustomization/flux-system/crds
    └── Kustomization/flux-system/crossplane
        └── Kustomization/flux-system/epis
            └── Kustomization/flux-system/security
                ├── Kustomization/flux-system/infrastructure
                │   └── Kustomization/flux-system/apps
`

func TestExample(t *testing.T) {
	plan := testutil.CheckExample(t, stack(), "platform/stack.yaml")
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, testutil.Render(t, plan), out.String())

	tree, err := plan.Graph(layering.GraphTree)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(tree), seedTree), "graph -o tree is seed 003's hierarchy from its root; got:\n%s", tree)
	assert.Equal(t, []string{"namespaces", "crds", "crossplane", "epis", "security", "infrastructure", "apps"}, plan.CriticalPath().Layers)
	for _, format := range []layering.GraphFormat{layering.GraphMermaid, layering.GraphDot} {
		g, err := plan.Graph(format)
		require.NoError(t, err)
		testutil.Golden(t, "graph-"+string(format), g)
	}
}

func TestNaiveIsFlagged(t *testing.T) {
	got := testutil.LintFindings(t, "platform/naive.yaml")
	// No webhook-order: Crossplane's webhooks validate its own
	// compositions and packages, not the custom resources of the other
	// groups whose CRDs the "crds" layer holds. No operator-wait: no layer
	// waits for "crossplane", so its being Ready early races nothing.
	for _, rule := range []lint.Rule{lint.RuleCRDOrder, lint.RuleCRDPrune, lint.RuleNamespaceOrder} {
		assert.Contains(t, string(got), "["+string(rule)+"]")
	}
	testutil.Golden(t, "naive-lint", got)
}
