package fleet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// fleetAt copies layering's fleet fixture into a temp dir with its
// artifact template pointing at host.
func fleetAt(t *testing.T, host string) (string, *fleet.Fleet) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("../fleet/testdata/fleet")))
	file := filepath.Join(dir, "fleet.yaml")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), "registry.example.com", host, 1))
	require.NoError(t, os.WriteFile(file, data, 0o644))
	f, err := fleet.Load(file)
	require.NoError(t, err)
	return dir, f
}

var pushOpts = fleet.WithPushOptions(oci.WithInsecure(), oci.WithSource("https://example.com/platform"), oci.WithRevision("main@sha1:"+strings.Repeat("0", 40)))

// Every cluster gets its own artifact; pushing again uploads nothing and
// moves no tag; a changed cluster is pushed alone.
func TestPush(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir, f := fleetAt(t, reg.Host)
	res, err := fleet.Push(t.Context(), f, pushOpts, fleet.Jobs(2))
	require.NoError(t, err)
	require.Len(t, res, 2)
	for _, r := range res {
		assert.Equal(t, fleet.Pushed, r.Status, "%s: %s", r.Cluster, r.Error)
		assert.Equal(t, "oci://"+reg.Host+"/platform/"+r.Cluster+":main", r.URL)
	}
	assert.NotEqual(t, res[0].Digest, res[1].Digest, "each cluster has its own content")

	// What prod's artifact holds: its render, the layers, no input.
	pulled := t.TempDir()
	_, err = oci.Pull(t.Context(), res[1].URL, pulled, oci.WithInsecure())
	require.NoError(t, err)
	files := testutil.ReadFiles(t, pulled)
	assert.Contains(t, files, "flux/layers/backup.yaml")
	assert.NotContains(t, files, "flux/layers/observability.yaml")
	assert.Contains(t, files["flux/vars/configmap-cluster-vars.yaml"], "cluster_name: prod-eu")
	assert.Contains(t, files, "apps/app.yaml")
	for p, data := range files {
		assert.NotContains(t, data, "s3cr3t", "a sensitive output reached %s", p)
		assert.False(t, strings.HasPrefix(p, "terraform/") || p == "fleet.yaml", "the fleet's input %s was pushed", p)
	}

	reg.Reset()
	again, err := fleet.Push(t.Context(), f, pushOpts)
	require.NoError(t, err)
	for i, r := range again {
		assert.Equal(t, fleet.Unchanged, r.Status, r.Cluster)
		assert.Equal(t, res[i].Digest, r.Digest)
	}
	assert.Zero(t, reg.BlobUploads(), "an unchanged fleet uploaded blobs")
	for _, req := range reg.Requests() {
		assert.False(t, strings.HasPrefix(req, "PUT "), "an unchanged fleet wrote %s", req)
	}

	// Only staging's outputs change: only staging is pushed.
	out := filepath.Join(dir, "terraform", "staging.json")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(out, []byte(strings.Replace(string(data), "eu-west-3", "eu-central-1", 1)), 0o644))
	third, err := fleet.Push(t.Context(), f, pushOpts)
	require.NoError(t, err)
	assert.Equal(t, fleet.Pushed, third[0].Status)
	assert.Equal(t, fleet.Unchanged, third[1].Status)
}

// One cluster's failure does not stop the others; the error says which
// failed, and its tag stays where it was.
func TestPushPartialFailure(t *testing.T) {
	reg := testutil.NewRegistry(t)
	_, f := fleetAt(t, reg.Host)
	f.Cluster("nowhere", fleet.ClusterArtifact("oci://127.0.0.1:1/platform/nowhere:main"))
	res, err := fleet.Push(t.Context(), f, pushOpts, fleet.WithPushOptions(oci.WithRetry(remote.Backoff{Steps: 1, Duration: time.Millisecond, Factor: 1})))
	require.ErrorIs(t, err, fleet.ErrSomeFailed)
	assert.ErrorContains(t, err, `cluster "nowhere": oci://127.0.0.1:1/platform/nowhere:main: `)
	require.Len(t, res, 3)
	assert.Equal(t, fleet.Pushed, res[0].Status, res[0].Error)
	assert.Equal(t, fleet.Pushed, res[1].Status, res[1].Error)
	assert.Equal(t, fleet.Failed, res[2].Status)
	assert.NotEmpty(t, res[2].Error)
	assert.Error(t, res[2].Err())
}

// A fleet with a problem pushes nothing.
func TestPushRefusesBadFleet(t *testing.T) {
	reg := testutil.NewRegistry(t)
	_, f := fleetAt(t, reg.Host)
	f.Cluster("bad", fleet.Disable("nope"))
	_, err := fleet.Push(t.Context(), f, pushOpts)
	require.ErrorContains(t, err, `cluster "bad": disable: the stack has no layer "nope"`)
	assert.Empty(t, reg.Requests())
	_, err = fleet.Push(t.Context(), f, fleet.Jobs(0))
	require.ErrorIs(t, err, fleet.ErrInvalidOption)
}

// faultSeeds are the seeds TestPushThroughFaults runs: FLUXPACK_FAULT_SEED
// runs one (to replay a failure), FLUXPACK_FAULT_SEEDS=n runs seeds 1…n;
// by default 3 (1 with -short): each run takes seconds, mostly stalls.
func faultSeeds(t *testing.T) []uint64 {
	if s := os.Getenv("FLUXPACK_FAULT_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "FLUXPACK_FAULT_SEED")
		return []uint64{seed}
	}
	n := 3
	if testing.Short() {
		n = 1
	}
	if s := os.Getenv("FLUXPACK_FAULT_SEEDS"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err, "FLUXPACK_FAULT_SEEDS")
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds
}

// Through a proxy that fails a fifth of the requests (5xx, 429, dropped
// connections, stalls), the default retries push every cluster whole, and
// no tag points at an incomplete artifact. The faults are seeded: a seed
// gives the same faults to the same requests on every run.
func TestPushThroughFaults(t *testing.T) {
	var pushedAll, runs int
	for _, seed := range faultSeeds(t) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runs++
			pushedAll += pushThroughFaults(t, seed)
		})
	}
	t.Logf("through 20%% faults: %d runs, %d of %d clusters pushed", runs, pushedAll, 8*runs)
}

func pushThroughFaults(t *testing.T, seed uint64) int {
	reg := testutil.NewRegistry(t)
	proxy := testutil.NewFaultProxy(t, reg.Host, testutil.FaultConfig{Seed: seed, Rate: 0.2})
	dir, f := fleetAt(t, proxy.Host)
	for _, c := range []string{"a", "b", "c", "d", "e", "f"} {
		f.Cluster(c, fleet.ClusterOutputs(filepath.Join(dir, "terraform", "staging.json")))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // the CLI's default --timeout
	defer cancel()
	res, err := fleet.Push(ctx, f, pushOpts, fleet.Jobs(4))
	var pushed, broken int
	for _, r := range res {
		ref, perr := name.ParseReference(strings.Replace(strings.TrimPrefix(r.URL, "oci://"), proxy.Host, reg.Host, 1), name.Insecure)
		require.NoError(t, perr)
		desc, herr := remote.Head(ref)
		switch r.Status {
		case fleet.Pushed:
			pushed++
			if herr != nil {
				broken++
				t.Errorf("%s: pushed but no tag: %v", r.Cluster, herr)
				continue
			}
			assert.Equal(t, r.Digest, desc.Digest.String())
			img, ierr := remote.Image(ref)
			require.NoError(t, ierr)
			layers, lerr := img.Layers()
			require.NoError(t, lerr)
			for _, l := range layers {
				rc, cerr := l.Compressed()
				if cerr != nil {
					broken++
					t.Errorf("%s: a layer of the tagged artifact is missing: %v", r.Cluster, cerr)
					continue
				}
				rc.Close()
			}
		case fleet.Failed:
			t.Errorf("%s failed: %s", r.Cluster, r.Error)
			if herr == nil {
				broken++
				t.Errorf("%s failed but its tag exists", r.Cluster)
			}
		default:
			t.Errorf("%s: %s on a first push", r.Cluster, r.Status)
		}
	}
	var faulted int
	for _, n := range proxy.Injected() {
		faulted += n
	}
	t.Logf("seed %d: %d of %d clusters pushed, %d broken tags; %d of %d requests faulted (%v)", seed, pushed, len(res), broken, faulted, proxy.Requests(), proxy.Injected())
	assert.NoError(t, err)
	assert.Equal(t, 8, pushed, "clusters pushed")
	assert.Zero(t, broken, "broken tags")
	return pushed
}

// A cluster's artifact is what `fluxpack render` of its stack into a copy
// of the stack's folder, less the fleet's inputs, then `fluxpack push`
// would make: the same digest, although Push renders in memory and reads
// the folder once for every cluster.
func TestPushIsRenderThenPush(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir, f := fleetAt(t, reg.Host)
	// A .sourceignore the rendered files and the layers both meet.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".sourceignore"), []byte("*.md\n/flux/vars/\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apps", "NOTES.md"), []byte("left out\n"), 0o644))
	res, err := fleet.Push(t.Context(), f, pushOpts)
	require.NoError(t, err)
	inputs, err := f.Inputs()
	require.NoError(t, err)
	for _, r := range res {
		tree := t.TempDir()
		require.NoError(t, os.CopyFS(tree, os.DirFS(dir)))
		for _, in := range inputs {
			rel, err := filepath.Rel(dir, in)
			require.NoError(t, err)
			require.NoError(t, os.Remove(filepath.Join(tree, rel)))
		}
		_, rendered, err := f.StackDir(r.Cluster)
		require.NoError(t, err)
		_, err = fleet.RenderCluster(f, r.Cluster, filepath.Join(tree, filepath.FromSlash(rendered)))
		require.NoError(t, err)
		want, err := oci.Push(t.Context(), tree, "oci://"+reg.Host+"/disk/"+r.Cluster+":main",
			oci.WithInsecure(), oci.WithSource("https://example.com/platform"), oci.WithRevision("main@sha1:"+strings.Repeat("0", 40)),
			oci.WithAnnotations(map[string]string{oci.ClusterAnnotation: r.Cluster}))
		require.NoError(t, err)
		assert.Equal(t, want.Digest, r.Digest, "cluster %s: fleet.Push's artifact is render then push, annotated with its cluster", r.Cluster)
	}
}
