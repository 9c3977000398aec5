package oci_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// contentFor is the tree of push number i: its files depend on i.
func contentFor(i int) map[string]string {
	files := map[string]string{
		"kustomization.yaml":              "resources: [app.yaml]\n",
		"app.yaml":                        fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  push: %q\n", fmt.Sprint(i)),
		"crds/crd.yaml":                   "kind: CustomResourceDefinition\n" + strings.Repeat("# padding line\n", 200*(1+i%5)),
		fmt.Sprintf("extra/%d.yaml", i%7): "kind: Namespace\n",
	}
	return files
}

// TestPushUnderRegistryFaults pushes 100 changing trees through a proxy that
// fails 20% of the requests (5xx, connections reset mid-body, stalls past the
// per-request deadline, 429 with Retry-After) in front of the real registry.
// Every push must succeed or fail with an error naming what it pushed, within
// its deadline; afterwards no tag may point at a manifest whose blobs are
// missing, and every successful push must pull back to its own tree.
func TestPushUnderRegistryFaults(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	proxy := testutil.NewFaultProxy(t, reg.Host, testutil.FaultConfig{Seed: 20261122, Rate: 0.2, Stall: time.Second, RetryAfter: 1})
	transport := remote.DefaultTransport.(*http.Transport).Clone()
	// Half the stall: a stalled request always times out, while the real
	// registry's answers, slow under -race on a loaded CI machine (a run
	// lost 15 pushes to 200ms timeouts no fault caused), do not.
	transport.ResponseHeaderTimeout = 500 * time.Millisecond
	backoff := remote.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6}
	const pushes, deadline = 100, 20 * time.Second

	type pushed struct {
		i      int
		digest string
	}
	var (
		mu     sync.Mutex
		ok     []pushed
		failed []string
		work   = make(chan int)
		wg     sync.WaitGroup
	)
	for range 5 { // five CI jobs pushing at once
		wg.Go(func() {
			for i := range work {
				dir := t.TempDir()
				testutil.WriteFiles(t, dir, contentFor(i))
				url := fmt.Sprintf("oci://%s/acme/platform:t%d", proxy.Host, i%8)
				ctx, cancel := context.WithTimeout(t.Context(), deadline)
				start := time.Now()
				res, err := oci.Push(ctx, dir, url, oci.WithTransport(transport), oci.WithRetry(backoff), oci.WithRevision(fmt.Sprint(i)))
				took := time.Since(start)
				cancel()
				assert.Less(t, took, deadline+time.Second, "push %d outlived its deadline", i)
				mu.Lock()
				if err != nil {
					assert.Contains(t, err.Error(), "pushing "+dir+" to "+url, "push %d: the error names what was pushed", i)
					failed = append(failed, err.Error())
				} else {
					ok = append(ok, pushed{i, res.Digest})
				}
				mu.Unlock()
			}
		})
	}
	for i := range pushes {
		work <- i
	}
	close(work)
	wg.Wait()

	// Every tag, read straight from the registry, points at a whole artifact.
	repo, err := name.NewRepository(reg.Host + "/acme/platform")
	require.NoError(t, err)
	tags, err := remote.List(repo, remote.WithContext(t.Context()))
	require.NoError(t, err)
	broken := 0
	for _, tag := range tags {
		img, err := remote.Image(repo.Tag(tag), remote.WithContext(t.Context()))
		require.NoError(t, err)
		if err := verifyBlobs(img); err != nil {
			broken++
			t.Errorf("tag %s points at a broken artifact: %v", tag, err)
		}
	}
	// Every successful push pulls back to its own tree.
	for _, p := range ok {
		out := filepath.Join(t.TempDir(), "pulled")
		_, err := oci.Pull(t.Context(), "oci://"+reg.Host+"/acme/platform@"+p.digest, out)
		require.NoError(t, err, "pulling push %d", p.i)
		assert.Equal(t, contentFor(p.i), testutil.ReadFiles(t, out), "push %d pulled back", p.i)
	}
	injected := proxy.Injected()
	total := 0
	for _, n := range injected {
		total += n
	}
	t.Logf("pushes tried %d: %d succeeded, %d failed; requests %d, faults injected %d %v; tags %d, broken tags %d",
		pushes, len(ok), len(failed), proxy.Requests(), total, injected, len(tags), broken)
	for _, f := range failed {
		t.Logf("failed: %s", f)
	}
	for _, f := range testutil.AllFaults {
		assert.Positive(t, injected[f], "fault %s was injected", f)
	}
	assert.Greater(t, len(ok), pushes*9/10, "retries should carry most pushes through a 20%% fault rate; failures: %q", failed)
	assert.Len(t, tags, 8)
}

// verifyBlobs reads the config and every layer of img, which checks that the
// registry has them and that they match their digests.
func verifyBlobs(img v1.Image) error {
	if _, err := img.RawConfigFile(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc) // verifies the digest at EOF
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// TestConcurrentPushesToOneTag pushes two different trees to the same tag at
// the same time, again and again: the tag must end on one of the two whole
// artifacts, never a mix.
func TestConcurrentPushesToOneTag(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	a, b := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, a, contentFor(1))
	testutil.WriteFiles(t, b, contentFor(2))
	url := "oci://" + reg.Host + "/acme/platform:race"
	for round := range 20 {
		var wg sync.WaitGroup
		digests := make([]string, 2)
		for k, dir := range []string{a, b} {
			wg.Go(func() {
				res, err := oci.Push(t.Context(), dir, url, oci.WithForce(), oci.WithRevision(fmt.Sprint(round)))
				if assert.NoError(t, err) {
					digests[k] = res.Digest
				}
			})
		}
		wg.Wait()
		out := filepath.Join(t.TempDir(), "pulled")
		md, err := oci.Pull(t.Context(), url, out)
		require.NoError(t, err)
		got := testutil.ReadFiles(t, out)
		switch md.Digest {
		case reg.Host + "/acme/platform@" + digests[0]:
			assert.Equal(t, contentFor(1), got, "round %d", round)
		case reg.Host + "/acme/platform@" + digests[1]:
			assert.Equal(t, contentFor(2), got, "round %d", round)
		default:
			t.Fatalf("round %d: tag points at %s, neither push (%v)", round, md.Digest, digests)
		}
	}
}

// TestPushHonoursRetryAfter checks that after a 429 with Retry-After: 1 the
// request is not sent again before a second has passed.
func TestPushHonoursRetryAfter(t *testing.T) {
	reg := testutil.StartDistribution(t, testutil.DistributionOptions{})
	proxy := testutil.NewFaultProxy(t, reg.Host, testutil.FaultConfig{Seed: 1, Rate: 1, Faults: []testutil.Fault{testutil.Fault429}, RetryAfter: 1})
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, contentFor(0))
	ctx, cancel := context.WithTimeout(t.Context(), 2500*time.Millisecond)
	defer cancel()
	_, err := oci.Push(ctx, dir, "oci://"+proxy.Host+"/acme/platform:v1", oci.WithRetry(remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 10}))
	require.Error(t, err, "every request is rate limited")
	events := proxy.Events()
	require.GreaterOrEqual(t, len(events), 2)
	for i := 1; i < len(events); i++ {
		gap := events[i].Time.Sub(events[i-1].Time)
		assert.GreaterOrEqual(t, gap, 950*time.Millisecond, "request %d came %s after a 429 asking for 1s", i, gap)
	}
	assert.LessOrEqual(t, len(events), 3, "a 2.5s deadline leaves room for at most 3 requests a second apart")
}
