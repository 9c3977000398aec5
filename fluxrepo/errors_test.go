package fluxrepo_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/outputs"
	"github.com/fluxpack/fluxpack/stackfile"
	"github.com/fluxpack/fluxpack/substitute"
)

// One error type per concept: every package's FileError is errdefs'
// FileError, so one errors.As serves them all. This does not compile if a
// package defines its own.
var (
	_ *fluxrepo.FileError = (*fluxbuild.FileError)(nil)
	_ *fluxrepo.FileError = (*layering.FileError)(nil)
	_ *fluxrepo.FileError = (*outputs.FileError)(nil)
	_ *fluxrepo.FileError = (*substitute.FileError)(nil)
	_ *fluxrepo.FileError = (*oci.FileError)(nil)
)

// Sentinels that several packages export are one value: errors.Is with any
// package's name matches an error of any other.
func TestSharedSentinels(t *testing.T) {
	for name, same := range map[string][]error{
		"ErrInvalidOption": {fluxrepo.ErrInvalidOption, layering.ErrInvalidOption, fluxbuild.ErrInvalidOption, outputs.ErrInvalidOption, substitute.ErrInvalidOption, oci.ErrInvalidOption},
		"ErrInvalidName":   {layering.ErrInvalidName, substitute.ErrInvalidName, outputs.ErrInvalidName},
		"ErrTooLarge":      {stackfile.ErrTooLarge, substitute.ErrTooLarge, outputs.ErrTooLarge},
		"ErrMalformed":     {substitute.ErrMalformed, outputs.ErrMalformed},
		"ErrWrongShape":    {substitute.ErrWrongShape, outputs.ErrWrongShape},
	} {
		for i, err := range same[1:] {
			assert.Same(t, same[0], err, "%s: value %d differs from the first", name, i+1)
		}
	}
}

// A file the tree lists but does not have, met by fluxbuild while fluxrepo
// reads the tree: the error is fs.ErrNotExist whatever wraps it, and names
// the missing file, both through Read (the entry point) and through Preview
// (a layer). A file that is there but broken is a *FileError with its path
// and line.
func TestErrorsThroughReadAndBuild(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		".git/HEAD":                        "ref: refs/heads/main\n",
		"clusters/prod/kustomization.yaml": "resources: [infra.yaml, gone.yaml]\n",
		"clusters/prod/infra.yaml":         infraKustomization,
		"infra/kustomization.yaml":         "resources: [missing.yaml]\n",
	})
	entry := filepath.Join(repo, "clusters", "prod")

	_, err := fluxrepo.Read(t.Context(), entry)
	require.Error(t, err, "Read of an entry point listing a missing file")
	assert.ErrorIs(t, err, fs.ErrNotExist, "Read: %v", err)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe, "Read: %v", err)
	assert.Equal(t, filepath.Join(entry, "gone.yaml"), pe.Path)
	var kfe *fluxrepo.FileError
	require.ErrorAs(t, err, &kfe, "Read: %v", err)
	assert.Equal(t, filepath.Join(entry, "kustomization.yaml"), kfe.Path, "the error names the kustomization that lists the missing file")

	require.NoError(t, os.WriteFile(filepath.Join(entry, "kustomization.yaml"), []byte("resources: [infra.yaml]\n"), 0o644))
	_, err = fluxrepo.Preview(t.Context(), entry, "infra", nil)
	require.Error(t, err, "Preview of a layer listing a missing file")
	assert.ErrorIs(t, err, fs.ErrNotExist, "Preview: %v", err)
	require.ErrorAs(t, err, &pe, "Preview: %v", err)
	assert.Equal(t, filepath.Join(repo, "infra", "missing.yaml"), pe.Path)

	// No kustomization.yaml: fluxbuild reads the files itself, with lines.
	require.NoError(t, os.Remove(filepath.Join(entry, "kustomization.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(entry, "broken.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n"), 0o644))
	_, err = fluxrepo.Read(t.Context(), entry)
	require.Error(t, err, "Read of an entry point holding broken YAML")
	var fe *fluxrepo.FileError
	require.ErrorAs(t, err, &fe, "Read: %v", err)
	assert.Equal(t, filepath.Join(repo, "clusters", "prod", "broken.yaml"), fe.Path)
	assert.Positive(t, fe.Line, "Read: %v", err)
	var be *fluxbuild.FileError
	require.ErrorAs(t, err, &be, "the same error is fluxbuild's FileError")
	assert.Same(t, fe, be)

	_, err = fluxrepo.Read(t.Context(), filepath.Join(repo, "clusters", "nope"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "Read of a missing entry point: %v", err)
}

// A Kustomization with a value layering refuses (deletionPolicy: Bogus),
// imported by fluxrepo: the error is layering's ErrInvalidOption, which is
// fluxrepo's, inside an ErrInvalidPlan and a *LayerError naming the layer.
func TestInvalidOptionThroughLayering(t *testing.T) {
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		"clusters/prod/infra.yaml": infraKustomization + "  deletionPolicy: Bogus\n",
		"infra/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
	})
	_, err := fluxrepo.Import(t.Context(), filepath.Join(repo, "clusters", "prod"))
	require.Error(t, err, "Import of a Kustomization with deletionPolicy: Bogus")
	assert.ErrorIs(t, err, fluxrepo.ErrInvalidOption, "Import: %v", err)
	assert.ErrorIs(t, err, layering.ErrInvalidPlan, "Import: %v", err)
	var le *layering.LayerError
	require.ErrorAs(t, err, &le, "Import: %v", err)
	assert.Equal(t, "infra", le.Layer)
	assert.True(t, errors.Is(le.Err, layering.ErrInvalidOption), "LayerError.Err: %v", le.Err)

	// fluxrepo's own options wrap the same sentinel.
	_, err = fluxrepo.Read(t.Context(), repo, fluxrepo.WithSource(fluxrepo.SourceRef{}, repo))
	assert.ErrorIs(t, err, layering.ErrInvalidOption, "Read with an empty WithSource: %v", err)
}

// A stack file over the size limit: layering's error matches the
// ErrTooLarge of every package.
func TestTooLargeThroughLayering(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stack.yaml")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, os.Truncate(path, stackfile.MaxSize+1))
	_, err := stackfile.Load(path)
	for _, sentinel := range []error{stackfile.ErrTooLarge, outputs.ErrTooLarge, substitute.ErrTooLarge} {
		assert.ErrorIs(t, err, sentinel, "stackfile.Load of a file over MaxSize: %v", err)
	}
}

const infraKustomization = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec:
  interval: 10m
  path: ./infra
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`

// A *FileError unwraps to the kind of problem: outputs' malformed file is
// ErrMalformed, by package substitute's name too, and names the file.
func TestMalformedThroughFileError(t *testing.T) {
	_, err := outputs.Parse("outputs.json", []byte(`{"a": `))
	require.Error(t, err, "Parse of truncated JSON")
	assert.ErrorIs(t, err, substitute.ErrMalformed, "Parse: %v", err)
	var fe *fluxrepo.FileError
	require.ErrorAs(t, err, &fe, "Parse: %v", err)
	assert.Equal(t, "outputs.json", fe.Path)
}

// A tenant's Kustomization the root applies cannot be kept by any layer:
// Import refuses it, naming it and what the stack cannot say, rather than
// move it into flux-system.
func TestImportRefusesRootTenant(t *testing.T) {
	tenant := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: team-a\n  namespace: team-a\n" +
		"spec:\n  serviceAccountName: team-a\n  interval: 5m\n  path: ./team-a\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n"
	repo := t.TempDir()
	testutil.WriteFiles(t, repo, map[string]string{
		".git/HEAD":                 "ref: refs/heads/main\n",
		"clusters/prod/infra.yaml":  infraKustomization,
		"clusters/prod/team-a.yaml": tenant,
		"infra/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n",
		"team-a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: team-a}\n",
	})
	_, err := fluxrepo.Import(t.Context(), filepath.Join(repo, "clusters", "prod"))
	require.Error(t, err)
	assert.ErrorContains(t, err, "clusters/prod/team-a.yaml:1: Kustomization/team-a/team-a: namespace team-a, serviceAccountName team-a")
}

// A layer whose artifact an ArtifactGenerator lays out in a temporary
// folder fails to render with a message that names the artifact, as the
// Read's own build errors do: the folder changes from one Read to the next
// and means nothing to the reader.
func TestRenderErrorNamesTheArtifact(t *testing.T) {
	dir := copyRepo(t, "artifact-generator")
	require.NoError(t, os.Remove(filepath.Join(dir, "platform", "infra", "controllers", "ingress.yaml")))
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(dir, "clusters", "prod"))
	require.NoError(t, err)
	defer repo.Close()
	_, err = repo.Render(t.Context(), "infra")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ExternalArtifact/flux-system/infra/controllers/kustomization.yaml")
	assert.NotContains(t, err.Error(), os.TempDir())
	_, _, err = repo.RenderUnresolved(t.Context(), "infra")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), os.TempDir())
}
