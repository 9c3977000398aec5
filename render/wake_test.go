package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/render"
)

// A stack file with wake renders wake.yaml and adds the wake Secret to the
// secret file, keeping its token when rendered again; without a secret file
// the Secret is left out, and said so.
func TestRenderFileWake(t *testing.T) {
	stackDir := renderableStack(t)
	stackFile := filepath.Join(stackDir, "stack.yaml")
	data, err := os.ReadFile(stackFile)
	require.NoError(t, err)
	withWake := strings.Replace(string(data), "  layers:\n", "  wake: {receiverURL: http://webhook-receiver.flux-system.svc.cluster.local.}\n  layers:\n", 1)
	require.NoError(t, os.WriteFile(stackFile, []byte(withWake), 0o644))

	out := filepath.Join(t.TempDir(), "out")
	r, err := render.StackFile(t.Context(), stackFile, out)
	require.NoError(t, err)
	assert.True(t, r.WakeLeftOut)
	assert.Contains(t, r.Files, "wake.yaml")

	secretFile := filepath.Join(t.TempDir(), "secrets.yaml")
	r, err = render.StackFile(t.Context(), stackFile, out, render.WithSecretFile(secretFile))
	require.NoError(t, err)
	assert.False(t, r.WakeLeftOut)
	first := wakeSecretOf(t, secretFile)
	assert.Len(t, first.Data["token"], 64, "32 random bytes, hex")
	assert.True(t, strings.HasPrefix(string(first.Data["address"]), "http://webhook-receiver.flux-system.svc.cluster.local./hook/"), "%s", first.Data["address"])

	r, err = render.StackFile(t.Context(), stackFile, out, render.WithSecretFile(secretFile), render.WithReceiverURL("http://127.0.0.1:9292"))
	require.NoError(t, err)
	again := wakeSecretOf(t, secretFile)
	assert.Equal(t, first.Data["token"], again.Data["token"], "rendering again keeps the token")
	assert.True(t, strings.HasPrefix(string(again.Data["address"]), "http://127.0.0.1:9292/hook/"))
	for name, data := range testutil.ReadFiles(t, out) {
		assert.NotContains(t, data, string(first.Data["token"]), "the token reached %s", name)
	}

	_, err = render.StackFile(t.Context(), stackFile, out, render.WithReceiverURL("127.0.0.1:9292"))
	require.ErrorIs(t, err, layering.ErrInvalidOption)
}

// wakeSecretOf is the wake Secret of a secret file (the vars Secret first).
func wakeSecretOf(t *testing.T, file string) corev1.Secret {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	docs := strings.Split(string(data), "\n---\n")
	require.Len(t, docs, 2, "the vars Secret and the wake Secret")
	var s corev1.Secret
	require.NoError(t, sigyaml.Unmarshal([]byte(docs[1]), &s))
	require.Equal(t, "external-secrets-wake", s.Name)
	return s
}
