package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
)

func TestExample(t *testing.T) {
	plan := testutil.CheckExample(t, stack(), "platform/stack.yaml")
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, testutil.Render(t, plan), out.String())
	for _, l := range plan.Layers {
		pb := l.Kustomization.Spec.PostBuild
		require.NotNil(t, pb, "layer %s", l.Name)
		assert.Equal(t, "cluster-vars", pb.SubstituteFrom[0].Name, "every layer gets the IaC variables")
	}
	assert.Equal(t, "karpenter", plan.CriticalPath().Layers[1], "Karpenter goes first")
}
