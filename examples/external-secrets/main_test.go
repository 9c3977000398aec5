package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/lint"
)

func TestExample(t *testing.T) {
	plan := testutil.CheckExample(t, stack(), "platform/stack.yaml")
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, testutil.Render(t, plan), out.String())
	crs := plan.Layers[3]
	assert.Equal(t, []string{"external-secrets-operator"}, crs.DependsOn, "the CRs wait for the webhook, not just the CRDs")
}

// fluxpack lint flags seed 002's naive chain: the webhook race (whose fix
// says the operator must wait too, as no layer waits for it yet) and the
// pruned CRDs.
func TestNaiveIsFlagged(t *testing.T) {
	got := testutil.LintFindings(t, "platform/naive.yaml")
	for _, rule := range []lint.Rule{lint.RuleWebhookOrder, lint.RuleCRDPrune} {
		assert.Contains(t, string(got), "["+string(rule)+"]")
	}
	assert.Contains(t, string(got), `give "external-secrets-operator" wait: true or health checks on its workload`)
	testutil.Golden(t, "naive-lint", got)
}
