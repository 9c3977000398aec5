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
	testutil.Golden(t, "run", out.Bytes())
	// Wave order: nothing of wave 0 starts before ingress-nginx is Ready,
	// which waits for both of wave -2.
	assert.Equal(t, []string{"external-dns", "external-secrets"}, plan.Layers[2].DependsOn)
	assert.Equal(t, []string{"ingress-nginx"}, plan.Layers[3].DependsOn)
	assert.Equal(t, []string{"external-dns", "ingress-nginx", "kube-prometheus-stack"}, plan.CriticalPath().Layers)
	for _, l := range plan.Layers {
		assert.True(t, l.Kustomization.Spec.Wait, "%s: a wave is Ready when its apps are", l.Name)
	}
}
