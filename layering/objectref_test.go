package layering_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/layering"
)

// TestParseObjectRef takes every form fluxpack prints an object in, and
// refuses what names none.
func TestParseObjectRef(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want layering.ObjectRef
		bad  bool
	}{
		{in: "ConfigMap/flux-system/vars", want: layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "vars"}},
		{in: "ClusterIssuer/letsencrypt", want: layering.ObjectRef{Kind: "ClusterIssuer", Name: "letsencrypt"}},
		// lint's health-check findings name a cluster-scoped object so.
		{in: "ClusterIssuer//letsencrypt", want: layering.ObjectRef{Kind: "ClusterIssuer", Name: "letsencrypt"}},
		// diff names objects with their API group.
		{in: "Widget.example.com/widgets/blue", want: layering.ObjectRef{Kind: "Widget", Namespace: "widgets", Name: "blue"}},
		{in: "vars", bad: true},
		{in: "a/b/c/d", bad: true},
		{in: "/flux-system/vars", bad: true},
		{in: "ConfigMap/flux-system/", bad: true},
		{in: ".example.com/ns/x", bad: true},
	} {
		got, err := layering.ParseObjectRef(tt.in)
		if tt.bad {
			assert.True(t, errors.Is(err, layering.ErrInvalidOption), "ParseObjectRef(%q): want ErrInvalidOption, got %v", tt.in, err)
			continue
		}
		if assert.NoError(t, err, "ParseObjectRef(%q)", tt.in) {
			assert.Equal(t, tt.want, got, "ParseObjectRef(%q)", tt.in)
		}
	}
}
