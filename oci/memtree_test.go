package oci_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// memTreeBase is a tree whose names order differently by component than
// by bytes ("a.yaml" and "a/"), with ignore rules of every kind: the
// defaults (.git), a .sourceignore at the root and one in a folder, a
// name pattern and one with a slash.
var memTreeBase = map[string]string{
	".git/HEAD":                   "ref: refs/heads/main\n",
	".sourceignore":               "*.md\n/clusters/prod/flux/skip/\n",
	"a.yaml":                      "kind: ConfigMap\n",
	"a/b.yaml":                    "kind: ConfigMap\n",
	"apps/app.yaml":               "kind: Deployment\n",
	"apps/README.md":              "ignored\n",
	"clusters/prod/flux/old.yaml": "kind: Kustomization # replaced\n",
	"clusters/prod/other.yaml":    "kind: ConfigMap\n",
	"infra/.sourceignore":         "*.tmp\n",
	"infra/x.yaml":                "kind: ConfigMap\n",
	"infra/scratch.tmp":           "ignored\n",
	"terraform/prod.json":         `{"token": {"sensitive": true, "value": "s3cr3t"}}`,
}

// memTreeRender is what replaces clusters/prod/flux.
var memTreeRender = map[string][]byte{
	"kustomization.yaml":       []byte("resources: [layers/a.yaml]\n"),
	"layers/a.yaml":            []byte("kind: Kustomization\n"),
	"layers/a.yaml.md":         []byte("left out by *.md\n"),
	"notes/only.md":            []byte("left out by *.md; its folder stays, empty, as on disk\n"),
	"skip/x.yaml":              []byte("left out by /clusters/prod/flux/skip/\n"),
	"vars/configmap-vars.yaml": []byte("kind: ConfigMap\n"),
	"z-last.yaml":              []byte("kind: ConfigMap\n"),
}

// TestTreeWithPushesWhatTheDiskWould holds PushTree of a Tree read once
// and changed in memory to Push of the same files written to disk: the
// same digest (so the same tar stream, order, modes and ignore rules), and
// the same "unchanged" answer.
func TestTreeWithPushesWhatTheDiskWould(t *testing.T) {
	reg := testutil.NewRegistry(t)
	base := t.TempDir()
	testutil.WriteFiles(t, base, memTreeBase)
	require.NoError(t, os.Chmod(filepath.Join(base, "apps", "app.yaml"), 0o755))

	// On disk: the render replaces the folder, the outputs file is gone.
	disk := t.TempDir()
	testutil.WriteFiles(t, disk, memTreeBase)
	require.NoError(t, os.Chmod(filepath.Join(disk, "apps", "app.yaml"), 0o755))
	require.NoError(t, os.RemoveAll(filepath.Join(disk, "clusters", "prod", "flux")))
	require.NoError(t, os.Remove(filepath.Join(disk, "terraform", "prod.json")))
	for name, data := range memTreeRender {
		p := filepath.Join(disk, "clusters", "prod", "flux", filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	want, err := oci.Push(t.Context(), disk, "oci://"+reg.Host+"/disk:v1")
	require.NoError(t, err)

	tree, err := oci.ReadTree(base)
	require.NoError(t, err)
	mem, err := tree.Without("terraform/prod.json").With("clusters/prod/flux", memTreeRender)
	require.NoError(t, err)
	assert.Equal(t, []string{
		".sourceignore", "a/b.yaml", "a.yaml", "apps/app.yaml",
		"clusters/prod/flux/kustomization.yaml", "clusters/prod/flux/layers/a.yaml",
		"clusters/prod/flux/vars/configmap-vars.yaml", "clusters/prod/flux/z-last.yaml",
		"clusters/prod/other.yaml", "infra/.sourceignore", "infra/x.yaml",
	}, mem.Files(), "archive order, ignore rules applied to the files made in memory")
	assert.Contains(t, tree.Files(), "clusters/prod/flux/old.yaml", "With leaves the tree it was called on alone")

	got, err := oci.PushTree(t.Context(), mem, "oci://"+reg.Host+"/mem:v1")
	require.NoError(t, err)
	assert.True(t, got.Pushed)
	assert.Equal(t, want.Digest, got.Digest, "PushTree(ReadTree(dir).With(...)) is Push of the same files on disk")

	// Pushed again, to the repository the disk tree went to: unchanged.
	again, err := oci.PushTree(t.Context(), mem, "oci://"+reg.Host+"/disk:v1")
	require.NoError(t, err)
	assert.False(t, again.Pushed, "the tag already holds the content")

	// Another render: pushed, and different. (The tree's outputs file
	// holds a sensitive value: PushTree refuses the tree while it holds it.)
	other, err := tree.Without("terraform/prod.json").With("clusters/prod/flux", map[string][]byte{"kustomization.yaml": []byte("resources: []\n")})
	require.NoError(t, err)
	res, err := oci.PushTree(t.Context(), other, "oci://"+reg.Host+"/disk:v1")
	require.NoError(t, err)
	assert.True(t, res.Pushed)
	assert.NotEqual(t, want.Digest, res.Digest)
}

// TestTreeConcurrentWith makes and pushes trees from one base on several
// goroutines at once (the race detector watches the shared files and
// ignore rules), each with its own content.
func TestTreeConcurrentWith(t *testing.T) {
	reg := testutil.NewRegistry(t)
	base := t.TempDir()
	testutil.WriteFiles(t, base, memTreeBase)
	tree, err := oci.ReadTree(base)
	require.NoError(t, err)
	var wg sync.WaitGroup
	digests := make([]string, 8)
	errs := make([]error, 8)
	for i := range digests {
		wg.Go(func() {
			mem, err := tree.Without("terraform/prod.json").With("clusters/prod/flux", map[string][]byte{"c.yaml": {byte('a' + i)}})
			if err != nil {
				errs[i] = err
				return
			}
			res, err := oci.PushTree(t.Context(), mem, "oci://"+reg.Host+"/c:v1")
			if err == nil {
				digests[i] = res.Digest
			}
			errs[i] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	seen := map[string]bool{}
	for _, d := range digests {
		assert.False(t, seen[d], "each tree has its own content")
		seen[d] = true
	}
}

func TestTreeRefuses(t *testing.T) {
	base := t.TempDir()
	testutil.WriteFiles(t, base, map[string]string{"a.yaml": "kind: ConfigMap\n", "file": "x"})
	tree, err := oci.ReadTree(base)
	require.NoError(t, err)
	secret := []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\nstringData: {token: x}\n")
	for _, tt := range []struct {
		name, dir string
		files     map[string][]byte
		want      error
		msg       string
	}{
		{"plaintext secret", "out", map[string][]byte{"s.yaml": secret}, oci.ErrPlaintextSecret, "out/s.yaml:2"},
		{"escape", "out", map[string][]byte{"../x.yaml": nil}, nil, "leaves the tree"},
		{"absolute folder", "/out", map[string][]byte{"x.yaml": nil}, nil, "relative to the tree"},
		{"sourceignore", "out", map[string][]byte{".sourceignore": []byte("*\n")}, nil, "not applied"},
		{"under a file", "file", map[string][]byte{"x.yaml": nil}, nil, "file is a file in the tree, not a folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tree.With(tt.dir, tt.files)
			require.Error(t, err, "With(%q, …)", tt.dir)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			}
			assert.ErrorContains(t, err, tt.msg)
		})
	}

	// A plaintext Secret on disk is refused when the tree is read, as by
	// Push, and let in with WithAllowSecrets, which then also lets in
	// those made in memory.
	testutil.WriteFiles(t, base, map[string]string{"s.yaml": string(secret)})
	_, err = oci.ReadTree(base)
	require.ErrorIs(t, err, oci.ErrPlaintextSecret)
	allowed, err := oci.ReadTree(base, oci.WithAllowSecrets())
	require.NoError(t, err)
	_, err = allowed.With("out", map[string][]byte{"s.yaml": secret})
	require.NoError(t, err)

	// The tree's options belong to ReadTree.
	_, err = oci.PushTree(t.Context(), allowed, "oci://127.0.0.1:1/x:v1", oci.WithIgnorePaths("*.md"))
	require.ErrorIs(t, err, oci.ErrInvalidOption)
	_, err = oci.PushTree(t.Context(), nil, "oci://127.0.0.1:1/x:v1")
	require.ErrorIs(t, err, oci.ErrInvalidOption)
}
