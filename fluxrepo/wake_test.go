package fluxrepo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

// copyRepo copies a fixture repository to a temporary directory (Wake
// writes into the repository).
func copyRepo(t *testing.T, repo string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "repos", repo)
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// wakeFolder is the files Wake wrote to dir, each after a "--- <path>"
// line, in Wake.Files' order.
func wakeFolder(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, p := range []string{"kustomization.yaml", "wake.yaml", "objects/kustomization.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		b.WriteString("--- " + p + "\n")
		b.Write(data)
	}
	return b.Bytes()
}

// Every fixture repository: the objects Wake writes (a golden each), the
// Secret outside the repository, nothing written when run again, the
// token kept; the folder, once in the tree, is read back as the wake
// Kustomization, which changes nothing; a changed dependsOn makes --check
// stale and rewrites wake.yaml alone, with the same token.
func TestWakeFixtures(t *testing.T) {
	for _, f := range fixtures {
		if strings.HasSuffix(f.name, "-undeclared") {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			root := copyRepo(t, f.repo)
			entry := filepath.Join(root, f.entry)
			dir := filepath.Join(entry, "wake")
			secretFile := filepath.Join(t.TempDir(), "wake-secret.yaml")
			opts := append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)
			cfg := fluxrepo.WakeConfig{Dir: dir, SecretFile: secretFile}

			res, err := fluxrepo.Wake(t.Context(), entry, cfg, opts...)
			require.NoError(t, err)
			assert.Equal(t, []string{"kustomization.yaml", "wake.yaml", "objects/kustomization.yaml"}, res.Changed)
			assert.True(t, res.SecretChanged)
			testutil.Golden(t, f.name+"-wake", wakeFolder(t, dir))

			secret := readSecret(t, secretFile)
			token := string(secret.Data["token"])
			require.Len(t, token, 64)
			assert.Equal(t, res.Wake.Receiver.Name, secret.Name)
			hook := strings.TrimPrefix(string(secret.Data["address"]), layering.DefaultReceiverURL)
			require.True(t, strings.HasPrefix(hook, "/hook/"), "%s", secret.Data["address"])
			for name, data := range testutil.ReadFiles(t, root) {
				assert.NotContains(t, data, token, "the token reached %s", name)
				assert.NotContains(t, data, hook, "the Receiver's URL reached %s", name)
			}

			// The folder is now part of the tree the entry applies: read
			// again, the wake Kustomization is a layer, and nothing changes.
			again, err := fluxrepo.Wake(t.Context(), entry, cfg, opts...)
			require.NoError(t, err)
			assert.Empty(t, again.Changed, "running wake again rewrote files")
			assert.False(t, again.SecretChanged, "running wake again rewrote the Secret")
			repo, err := fluxrepo.Read(t.Context(), entry, opts...)
			require.NoError(t, err)
			defer repo.Close()
			var wakeLayers []string
			for _, l := range repo.Plan.Layers {
				if layering.IsWakeKustomization(l.Kustomization) {
					wakeLayers = append(wakeLayers, l.Name)
				}
			}
			assert.Equal(t, []string{res.Wake.Kustomization.Name}, wakeLayers, "the entry applies the wake Kustomization")
			assert.True(t, repo.Plan.CriticalPath().Woken, "a tree with the wake Kustomization wakes its dependents")

			check := cfg
			check.Check = true
			st, err := fluxrepo.Wake(t.Context(), entry, check, opts...)
			require.NoError(t, err)
			assert.False(t, st.Stale())

			// A Kustomization that depends on nothing any more.
			var changed string
			for _, l := range repo.Plan.Layers {
				if len(l.DependsOn) > 0 && l.File != "" && !strings.Contains(l.Name, "/") {
					changed = filepath.Join(root, l.File)
					data, err := os.ReadFile(changed)
					require.NoError(t, err)
					edited := bytes.Replace(data, []byte("  dependsOn:\n"), []byte("  dependsOnGone:\n"), 1)
					require.NotEqual(t, data, edited, "%s has no dependsOn block", l.File)
					require.NoError(t, os.WriteFile(changed, edited, 0o644))
					break
				}
			}
			require.NotEmpty(t, changed)
			st, err = fluxrepo.Wake(t.Context(), entry, check, opts...)
			if err != nil {
				require.ErrorIs(t, err, fluxrepo.ErrInvalidOption, "the only edge is gone: nothing to wake")
				return
			}
			assert.Equal(t, []string{"wake.yaml"}, st.Changed, "check after %s changed", changed)
			res, err = fluxrepo.Wake(t.Context(), entry, cfg, opts...)
			require.NoError(t, err)
			assert.Equal(t, []string{"wake.yaml"}, res.Changed)
			assert.False(t, res.SecretChanged)
			assert.Equal(t, token, string(readSecret(t, secretFile).Data["token"]), "the token changed")
		})
	}
}

// The Secret stays out of the repository, a secret file holding other
// objects is not overwritten, and a tree without dependsOn has nothing
// to wake.
func TestWakeRefuses(t *testing.T) {
	root := copyRepo(t, "platform-hierarchy")
	entry := filepath.Join(root, "clusters/mycluster-0")
	opts := []fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithExternal(tfVars)}
	_, err := fluxrepo.Wake(t.Context(), entry, fluxrepo.WakeConfig{Dir: filepath.Join(entry, "wake"), SecretFile: filepath.Join(root, "secret.yaml")}, opts...)
	require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
	assert.ErrorContains(t, err, "inside the repository")

	other := filepath.Join(t.TempDir(), "secrets.yaml")
	require.NoError(t, os.WriteFile(other, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: apps\n"), 0o600))
	_, err = fluxrepo.Wake(t.Context(), entry, fluxrepo.WakeConfig{Dir: filepath.Join(entry, "wake"), SecretFile: other}, opts...)
	require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
	assert.ErrorContains(t, err, "must hold the wake Secret alone")
	_, err = os.Stat(filepath.Join(entry, "wake"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused run wrote the folder")

	_, err = fluxrepo.Wake(t.Context(), entry, fluxrepo.WakeConfig{Dir: filepath.Join(t.TempDir(), "wake")}, opts...)
	require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
	assert.ErrorContains(t, err, "not inside")

	flat := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(flat, "ks.yaml"), []byte(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 10m, path: ./apps, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
`), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(flat, "apps"), 0o755))
	_, err = fluxrepo.Wake(t.Context(), flat, fluxrepo.WakeConfig{Dir: filepath.Join(flat, "wake")}, fluxrepo.WithRoot(flat))
	require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
	assert.ErrorContains(t, err, "there is nothing to wake")
}

func readSecret(t *testing.T, file string) corev1.Secret {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	var s corev1.Secret
	require.NoError(t, sigyaml.Unmarshal(data, &s))
	return s
}
