package fleet_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// TestPromoteRender: staging runs a revision prod has no artifact of.
// Promote says so and moves nothing; with Render it refuses while the
// checkout is at another commit or has changes to the stack's files,
// pushing nothing, and once the checkout is at the revision it renders
// prod's own artifact of it (prod's variables, the revision's files),
// pushes it to the revision's tag and moves prod's tag there.
func TestPromoteRender(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir, f := fleetAt(t, reg.Host)
	testutil.Git(t, dir, "init", "-q", "-b", "trunk")
	testutil.Git(t, dir, "add", ".")
	testutil.Git(t, dir, "commit", "-q", "-m", "r1")
	r1 := testutil.Git(t, dir, "rev-parse", "HEAD")
	push := fleet.WithPushOptions(oci.WithInsecure(), oci.WithGitDefaults())
	_, err := fleet.Push(t.Context(), f, push)
	require.NoError(t, err)
	digest := func(url string) string {
		t.Helper()
		info, err := oci.Describe(t.Context(), url, oci.WithInsecure())
		require.NoError(t, err, url)
		return info.Digest
	}
	prodURL, err := f.Artifact("prod")
	require.NoError(t, err)
	prod1 := digest(prodURL)

	// Revision 2 changes an app; only staging is pushed at it (a fleet
	// file of staging alone, outside the checkout).
	app := filepath.Join(dir, "apps", "app.yaml")
	data, err := os.ReadFile(app)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(app, append(data, "  release: r2\n"...), 0o644))
	testutil.Git(t, dir, "commit", "-q", "-am", "r2")
	r2 := testutil.Git(t, dir, "rev-parse", "HEAD")
	only := filepath.Join(t.TempDir(), "staging.yaml")
	require.NoError(t, os.WriteFile(only, []byte("apiVersion: fluxpack.dev/v1alpha1\nkind: Fleet\nmetadata: {name: platform}\nspec:\n  stack: "+filepath.Join(dir, "stack.yaml")+
		"\n  artifact: oci://"+reg.Host+"/platform/{{cluster}}:main\n  clusters:\n    - {name: staging, outputs: "+filepath.Join(dir, "terraform", "staging.json")+"}\n"), 0o644))
	staging, err := fleet.Load(only)
	require.NoError(t, err)
	res, err := fleet.Push(t.Context(), staging, push, fleet.WithTreeOptions(oci.WithIgnorePaths("terraform/prod.json")))
	require.NoError(t, err)
	require.Equal(t, "trunk@sha1:"+r2, res[0].Revision)
	revTag := strings.TrimSuffix(prodURL, ":main") + ":" + oci.RevisionTag("main", res[0].Revision)

	read := []oci.ListOption{oci.WithInsecure()}
	opts := fleet.PromoteOptions{Read: read, Promote: []oci.PromoteOption{oci.WithInsecure()}}
	_, err = fleet.Promote(t.Context(), f, "prod", "staging", opts)
	require.ErrorIs(t, err, fleet.ErrNoRevision)
	assert.ErrorContains(t, err, `cluster "prod" has no artifact of revision trunk@sha1:`+r2)

	render := opts
	render.Render, render.Push = true, []fleet.Option{push}
	refused := []struct {
		name, want string
		setup      func()
	}{
		{name: "another commit", want: "is at sha1:" + r1 + ", not at revision trunk@sha1:" + r2 + ": check that revision out",
			setup: func() { testutil.Git(t, dir, "checkout", "-q", r1) }},
		{name: "changed files", want: "has changes to files of revision trunk@sha1:" + r2 + " (apps/app.yaml)", setup: func() {
			testutil.Git(t, dir, "checkout", "-q", "trunk")
			require.NoError(t, os.WriteFile(app, []byte("changed: true\n"), 0o644))
		}},
	}
	for _, tt := range refused {
		tt.setup()
		reg.Reset()
		_, err = fleet.Promote(t.Context(), f, "prod", "staging", render)
		require.ErrorIs(t, err, fleet.ErrCheckout, tt.name)
		assert.ErrorContains(t, err, tt.want, tt.name)
		assert.ErrorContains(t, err, "nothing moved", tt.name)
		assert.Zero(t, reg.BlobUploads(), "%s: a refused render uploaded", tt.name)
		for _, req := range reg.Requests() {
			assert.False(t, strings.HasPrefix(req, "PUT "), "%s: a refused render wrote %s", tt.name, req)
		}
		assert.Equal(t, prod1, digest(prodURL), "%s: prod's tag moved", tt.name)
	}

	// At revision 2, clean: prod's own artifact of it is made and promoted.
	testutil.Git(t, dir, "checkout", "-q", "--", ".")
	got, err := fleet.Promote(t.Context(), f, "prod", "staging", render)
	require.NoError(t, err)
	assert.True(t, got.Pushed, "prod's tag moved")
	assert.Equal(t, digest(revTag), got.Digest, "prod's tag is on the artifact of the revision's tag")
	assert.NotEqual(t, digest(strings.TrimSuffix(prodURL, "prod:main")+"staging:main"), got.Digest, "prod was handed staging's artifact")
	info, err := oci.Describe(t.Context(), prodURL, read...)
	require.NoError(t, err)
	assert.Equal(t, "trunk@sha1:"+r2, info.Revision)
	pulled := t.TempDir()
	_, err = oci.Pull(t.Context(), prodURL, pulled, oci.WithInsecure())
	require.NoError(t, err)
	files := testutil.ReadFiles(t, pulled)
	assert.Contains(t, files["flux/vars/configmap-cluster-vars.yaml"], "cluster_name: prod-eu", "prod's own variables")
	assert.Contains(t, files, "flux/layers/backup.yaml", "prod's own layers")
	assert.Contains(t, files["apps/app.yaml"], "release: r2", "revision 2's files")
	for p, data := range files {
		assert.NotContains(t, data, "s3cr3t", "a sensitive output reached %s", p)
	}

	// Again: the artifact is there, nothing is rendered, the tag stays.
	again, err := fleet.Promote(t.Context(), f, "prod", "staging", render)
	require.NoError(t, err)
	assert.False(t, again.Pushed)
	assert.Equal(t, got.Digest, again.Digest)
}
