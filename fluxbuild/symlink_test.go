package fluxbuild_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

// A symbolic link whose target does not exist (into a git-ignored folder,
// say) is left out with a warning naming it, as Flux leaves it out; a
// packed source (a GitRepository's working tree) loses every link, as
// source-controller archives regular files only; another source (a tree
// fluxpack pushes, following links) keeps the links that resolve.
func TestBuildSymlinks(t *testing.T) {
	dir := t.TempDir()
	cm := func(name string) []byte {
		return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: apps}\n")
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "apps"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "shared"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apps", "a.yaml"), cm("a"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shared", "b.yaml"), cm("b"), 0o644))
	require.NoError(t, os.Symlink("../shared/b.yaml", filepath.Join(dir, "apps", "b.yaml")))
	require.NoError(t, os.Symlink("../.tls/tls.yaml", filepath.Join(dir, "apps", "tls.yaml")))
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./apps"}}

	tests := []struct {
		name   string
		packed bool
		want   []string
		warned []string
	}{
		{name: "pushed tree", want: []string{"ConfigMap/apps/a", "ConfigMap/apps/b"},
			warned: []string{"skipping a symlink whose target does not exist, as Flux leaves it out path=" + filepath.Join(dir, "apps", "tls.yaml")}},
		{name: "packed source", packed: true, want: []string{"ConfigMap/apps/a"},
			warned: []string{
				"skipping a symlink: source-controller leaves symlinks out of the artifact it packs path=" + filepath.Join(dir, "apps", "b.yaml"),
				"skipping a symlink: source-controller leaves symlinks out of the artifact it packs path=" + filepath.Join(dir, "apps", "tls.yaml"),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
					return slog.Attr{}
				}
				return a
			}}))
			objs, err := fluxbuild.Build(t.Context(), fluxbuild.Source{Dir: dir, Packed: tt.packed}, ks, fluxbuild.WithLogger(log))
			require.NoError(t, err, "Build of %s with a dangling symlink", tt.name)
			var got []string
			for _, o := range objs {
				got = append(got, o.String())
			}
			assert.Equal(t, tt.want, got)
			var warned []string
			for _, l := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
				warned = append(warned, string(bytes.ReplaceAll(bytes.TrimPrefix(l, []byte("msg=")), []byte(`"`), nil)))
			}
			assert.Equal(t, tt.warned, warned)
		})
	}

	_, err := fluxbuild.Build(t.Context(), fluxbuild.Source{Dir: dir}, ks, fluxbuild.WithLogger(nil))
	require.ErrorIs(t, err, fluxbuild.ErrInvalidOption)
}
