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

// fluxpack lint flags seed 002's naive chain: the webhook race, the operator
// that does not wait, the pruned CRDs.
func TestNaiveIsFlagged(t *testing.T) {
	got := testutil.LintFindings(t, "platform/naive.yaml")
	for _, rule := range []lint.Rule{lint.RuleWebhookOrder, lint.RuleOperatorWait, lint.RuleCRDPrune} {
		assert.Contains(t, string(got), "["+string(rule)+"]")
	}
	testutil.Golden(t, "naive-lint", got)
}
