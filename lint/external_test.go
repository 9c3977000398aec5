package lint_test

import (
	"regexp"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// TestExternalTakesWhatLintPrints: the objects lint names as made by no
// layer (a substituteFrom, a valuesFrom, a health check on a
// cluster-scoped object, printed KIND/NAME) are each a form --external
// accepts (layering.ParseObjectRef), and declaring them so removes the
// findings.
func TestExternalTakesWhatLintPrints(t *testing.T) {
	files := map[string]string{
		"apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: ${region}\n",
		"rel/hr.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\nspec:\n  interval: 1h\n" +
			"  chart:\n    spec:\n      chart: web\n      sourceRef: {kind: HelmRepository, name: charts}\n  valuesFrom:\n    - kind: ConfigMap\n      name: web-values\n",
	}
	// Two stacks: a chart lint cannot render (rel's) may make any object,
	// so beside it lint does not claim that no layer makes the
	// ClusterIssuer; it says it could not check.
	stacks := []*layering.Builder{
		stack().Layer("apps", layering.Path("./apps"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"}),
			layering.HealthChecks(meta.NamespacedObjectKindReference{APIVersion: "cert-manager.io/v1", Kind: "ClusterIssuer", Name: "letsencrypt"})),
		stack().Layer("rel", layering.Path("./rel")),
	}
	printed := regexp.MustCompile(`--external ([^ ,)]+)|^health check ([^ :]+):`)
	var refs []layering.ObjectRef
	var forms []string
	for _, b := range stacks {
		for _, f := range lintStack(t, b, files) {
			m := printed.FindStringSubmatch(f.Message)
			if m == nil {
				continue
			}
			form := m[1] + m[2]
			forms = append(forms, form)
			ref, err := layering.ParseObjectRef(form)
			require.NoError(t, err, "lint prints %s: %s", form, f)
			refs = append(refs, ref)
		}
	}
	require.ElementsMatch(t, []string{"ConfigMap/flux-system/cluster-vars", "ConfigMap/flux-system/web-values", "ClusterIssuer/letsencrypt"}, forms, "the objects lint names")
	for _, b := range stacks {
		for _, f := range lintStack(t, b, files, lint.WithExternal(refs...)) {
			assert.NotContains(t, []lint.Rule{lint.RuleSubstituteFrom, lint.RuleValuesFrom, lint.RuleHealthCheck}, f.Rule, "lint with --external %v still reports %s", refs, f)
		}
	}
}

// TestCoverageReasons: each reason once, with the layers it concerns.
func TestCoverageReasons(t *testing.T) {
	c := lint.Coverage{Cause: lint.CoverageSource, Missing: []string{
		`layer "a": GitRepository/flux-system/x could not be fetched: refused`,
		`layer "b": OCIRepository/flux-system/y is another source than the repository`,
		`layer "c": GitRepository/flux-system/x could not be fetched: refused`,
		`HelmRelease/apps/web: chart not found`,
	}}
	assert.Equal(t, []string{
		`GitRepository/flux-system/x could not be fetched: refused (layers "a", "c")`,
		`OCIRepository/flux-system/y is another source than the repository (layer "b")`,
		`HelmRelease/apps/web: chart not found`,
	}, c.Reasons(), "Coverage.Reasons")
}
