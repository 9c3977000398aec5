package fluxbuild_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

var operatorChart = filepath.Join("testdata", "charts", "secrets-operator")

// renderSummary prints what a render gave: the release, the CRDs and
// the manifest, each object with the template it came from.
func renderSummary(rel *fluxbuild.Release) string {
	var b strings.Builder
	fmt.Fprintf(&b, "release %s/%s chart %s\n", rel.Namespace, rel.Name, rel.Chart)
	for _, o := range rel.CRDs {
		fmt.Fprintf(&b, "crd %s (%s:%d)\n", o, o.File, o.Line)
	}
	for _, o := range rel.Objects {
		fmt.Fprintf(&b, "object %s (%s)\n", o, o.File)
	}
	b.WriteString("---\n")
	b.Write(rel.Manifest)
	return b.String()
}

// Every case of testutil.ReleaseCases: what RenderRelease gives, golden
// (the e2e holds the same cases to a real helm-controller).
func TestRenderRelease(t *testing.T) {
	for _, tc := range testutil.ReleaseCases() {
		t.Run(tc.Name, func(t *testing.T) {
			rel, err := fluxbuild.RenderRelease(t.Context(), tc.Release("flux-system"), operatorChart, fluxbuild.WithValuesFrom(tc.Sources...))
			if tc.WantErr != "" {
				require.ErrorContains(t, err, tc.WantErr, "RenderRelease of case %s", tc.Name)
				require.ErrorContains(t, err, "HelmRelease/flux-system/secrets-operator")
				testutil.Golden(t, "release-"+tc.Name, []byte(err.Error()+"\n"))
				return
			}
			require.NoError(t, err, "RenderRelease of case %s", tc.Name)
			testutil.Golden(t, "release-"+tc.Name, []byte(renderSummary(rel)))
		})
	}
}

func TestRenderReleaseBadInput(t *testing.T) {
	hr := testutil.ReleaseCase{}.Release("flux-system")
	_, err := fluxbuild.RenderRelease(t.Context(), hr, filepath.Join("testdata", "charts", "absent"))
	require.ErrorIs(t, err, fluxbuild.ErrChartNotFound)
	require.ErrorContains(t, err, "HelmRelease/flux-system/secrets-operator")
	_, err = fluxbuild.RenderRelease(t.Context(), hr, operatorChart, fluxbuild.WithKubeVersion("not-a-version"))
	require.ErrorIs(t, err, fluxbuild.ErrInvalidOption)
	_, err = fluxbuild.RenderRelease(t.Context(), hr, operatorChart, fluxbuild.WithValuesFrom(&corev1.Pod{}))
	require.ErrorIs(t, err, fluxbuild.ErrInvalidOption)
}

// Values from Secrets never reach the templates with WithRedactedSecrets:
// a whole value (targetPath) and each leaf of a values document print as
// REDACTED; ConfigMap values print as they are.
func TestRenderReleaseRedactsSecrets(t *testing.T) {
	for _, name := range []string{"secret-values", "secret-values-yaml"} {
		cases := testutil.ReleaseCases()
		i := slices.IndexFunc(cases, func(c testutil.ReleaseCase) bool { return c.Name == name })
		require.GreaterOrEqual(t, i, 0)
		tc := cases[i]
		rel, err := fluxbuild.RenderRelease(t.Context(), tc.Release("flux-system"), operatorChart, fluxbuild.WithValuesFrom(tc.Sources...), fluxbuild.WithRedactedSecrets())
		require.NoError(t, err, "RenderRelease of case %s, redacted", name)
		require.Contains(t, string(rel.Manifest), "token: REDACTED")
		require.NotContains(t, string(rel.Manifest), "s3cr3t")
		require.NotContains(t, string(rel.Manifest), "from-secret")
	}
}
