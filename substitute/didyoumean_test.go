package substitute_test

import (
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/resource"

	"github.com/fluxpack/fluxpack/substitute"
)

// A mistyped variable gets the "did you mean" a mistyped layer gets, from
// Check (lint's finding) and from strict substitution (preview, render)
// alike; a variable close to none gets none.
func TestMistypedVariable(t *testing.T) {
	vars := map[string]string{"cluster_name": "prod", "cluster_region": "eu-west-1", "domain": "example.com"}
	tests := []struct {
		ref  string
		hint string // after the variable's name
	}{
		{ref: "clustr_name", hint: ` (did you mean "cluster_name"?)`},
		{ref: "CLUSTER_REGION", hint: ` (did you mean "cluster_region"?)`},
		{ref: "zone", hint: ""},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			data := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop}\ndata:\n  v: ${" + tt.ref + "}\n"
			findings := substitute.Check([]substitute.File{{Path: "app.yaml", Data: []byte(data)}}, substitute.Available{Values: vars})
			require.Len(t, findings, 1, "Check(${%s}): %v", tt.ref, findings)
			assert.Contains(t, findings[0].Message, `variable "`+tt.ref+`" is not set and has no default`+tt.hint+`: Flux (strict mode) fails the Kustomization`,
				"Check(${%s})", tt.ref)

			ks := &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "flux-system"},
				Spec:       kustomizev1.KustomizationSpec{PostBuild: &kustomizev1.PostBuild{Substitute: vars}},
			}
			s, err := substitute.NewSubstituter(ks)
			require.NoError(t, err)
			res, err := resource.NewFactory(nil).FromBytes([]byte(data))
			require.NoError(t, err)
			_, err = s.Resource(res)
			require.ErrorIs(t, err, substitute.ErrVarNotSet)
			assert.EqualError(t, err, `ConfigMap/shop/app: substituting variables: variable not set (strict mode): "`+tt.ref+`"`+tt.hint)
		})
	}
}
