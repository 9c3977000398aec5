//go:build e2e

package e2e

import (
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/oci"
)

// TestPromoteRequireReady is issue 43's proof of `promote --require-ready`
// in real Flux: staging's cluster runs the fleet's revision 1, on which its
// apps layer does not build. Promoting prod from staging is refused (exit
// 1, naming apps and kustomize's message) and prod's tag does not move;
// it is still refused once revision 2 (apps fixed) is pushed but before
// staging has applied it; once staging runs revision 2, Ready (fluxpack
// wait says so), prod's tag moves to prod's own artifact of revision 2.
func TestPromoteRequireReady(t *testing.T) {
	t.Parallel()
	staging := StartCluster(t, Fast) // prod's cluster is not needed: promotion moves a tag
	kubeconfig := staging.path("kubeconfig")
	host := staging.Registry.Host
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "fleet"), dir)
	file := filepath.Join(dir, "fleet.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(mustRead(t, file), "REGISTRY", host, 1)), 0o644))
	// Revision 1: apps names a file that does not exist (BuildFailed).
	broken := filepath.Join(dir, "apps", "kustomization.yaml")
	require.NoError(t, os.WriteFile(broken, []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - app.yaml\n  - missing.yaml\n"), 0o644))
	f, err := fleet.Load(file)
	require.NoError(t, err)
	pushAt := func(commit string) map[string]fleet.Result {
		t.Helper()
		var res []fleet.Result
		require.NoError(t, json.Unmarshal(fluxpack(t, "push", "--fleet", file, "--insecure-registry", "-o", "json",
			"--source", "https://github.com/fluxpack/fluxpack", "--revision", "main@sha1:"+commit), &res))
		out := map[string]fleet.Result{}
		for _, r := range res {
			out[r.Cluster] = r
		}
		return out
	}
	prodTag := func() string {
		t.Helper()
		info, err := oci.Describe(t.Context(), "oci://"+host+"/fleet/prod:main", oci.WithInsecure())
		require.NoError(t, err)
		return info.Digest
	}
	r1, r2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	first := pushAt(r1)

	// staging: its wake Secret, then its root, following staging:main.
	b, err := f.Stack("staging")
	require.NoError(t, err)
	plan, err := b.Build()
	require.NoError(t, err)
	secret, err := plan.Wake.Secret(staging.ReceiverURL, rand.Text())
	require.NoError(t, err)
	staging.create(secret)
	applyRootAt(t, staging, "oci://"+host+"/fleet/staging", "main", "clusters")
	waitFor := func(digest string) (int, string) {
		t.Helper()
		code, _, stderr := runFluxpack(t.Context(), "wait", "--kubeconfig", kubeconfig, "--revision", digest, "--timeout", reconcileDeadline.String())
		return code, stderr
	}
	code, stderr := waitFor(first["staging"].Digest)
	require.Equal(t, cli.ExitFinding, code, "fluxpack wait on staging's broken revision 1: %s", stderr)
	require.Contains(t, stderr, "Kustomization/flux-system/apps failed (terminal)")

	promote := []string{"promote", "--fleet", file, "prod", "--from", "staging", "--require-ready",
		"--kubeconfig", kubeconfig, "--from-context", "e2e", "--insecure-registry"}
	// kustomize-controller retries apps while it fails: between two
	// attempts apps is Reconciling, and promote names it so. Every
	// promotion is refused; one made while apps stands failed names
	// kustomize's message.
	failed := regexp.MustCompile(`Kustomization/flux-system/apps Failed: .*missing\.yaml`)
	var stdout string
	for deadline := time.Now().Add(reconcileDeadline); ; time.Sleep(time.Second) {
		code, stdout, stderr = runFluxpack(t.Context(), promote...)
		require.Equal(t, cli.ExitFinding, code, "promote --require-ready while staging fails: stdout:\n%s\nstderr:\n%s", stdout, stderr)
		require.Contains(t, stderr, `cluster "staging" does not run`)
		require.Empty(t, stdout)
		require.Equal(t, first["prod"].Digest, prodTag(), "a refused promotion moved prod's tag")
		if failed.MatchString(stderr) {
			break
		}
		require.Contains(t, stderr, "Kustomization/flux-system/apps Reconciling", "the blocking layer, between two of its attempts")
		require.False(t, time.Now().After(deadline), "promote never named apps' failure and kustomize's message; last stderr:\n%s", stderr)
	}

	// Revision 2 fixes apps. A fleet push moves both main tags: prod's goes
	// back to its revision-1 artifact, to be promoted.
	require.NoError(t, os.Remove(broken))
	second := pushAt(r2)
	fluxpack(t, "promote", "oci://"+host+"/fleet/prod:main", "--from", oci.RevisionTag("main", "main@sha1:"+r1), "--insecure-registry")
	require.Equal(t, first["prod"].Digest, prodTag())
	// staging's tag holds revision 2, which staging has not applied yet.
	code, _, stderr = runFluxpack(t.Context(), promote...)
	assert.Equal(t, cli.ExitFinding, code, "promote --require-ready before staging applied revision 2: %s", stderr)
	assert.Equal(t, first["prod"].Digest, prodTag(), "a refused promotion moved prod's tag")

	(&Deployment{c: staging}).Reconcile(t)
	code, stderr = waitFor(second["staging"].Digest)
	require.Equal(t, cli.ExitOK, code, "fluxpack wait on staging's revision 2: %s", stderr)
	code, stdout, stderr = runFluxpack(t.Context(), promote...)
	require.Equal(t, cli.ExitOK, code, "promote --require-ready once staging is Ready: %s", stderr)
	assert.Equal(t, host+"/fleet/prod:main@"+second["prod"].Digest+"\n", stdout)
	assert.Equal(t, second["prod"].Digest, prodTag(), "prod's tag is on prod's own artifact of revision 2")
	assert.NotEqual(t, second["staging"].Digest, prodTag(), "prod was handed staging's artifact")
	recordSummary("F1", "promote --fleet --require-ready: refused (exit 1, apps' BuildFailed named) while staging failed on revision 1 and before it applied revision 2; done once staging ran revision 2 Ready")
}
