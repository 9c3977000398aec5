package suggest_test

import (
	"testing"

	"github.com/fluxpack/fluxpack/internal/suggest"
)

func TestDidYouMean(t *testing.T) {
	known := []string{"crds", "cert-manager", "infra-controllers", "team-a/apps"}
	for name, want := range map[string]string{
		"cert-manger":      ` (did you mean "cert-manager"?)`,
		"infra-controller": ` (did you mean "infra-controllers"?)`,
		"CRDs":             ` (did you mean "crds"?)`,
		"apps":             ` (did you mean "team-a/apps"?)`,
		"monitoring":       "",
		"crds":             "",
		"x":                "",
	} {
		if got := suggest.DidYouMean(name, known); got != want {
			t.Errorf("DidYouMean(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDidYouMeanVariables(t *testing.T) {
	known := []string{"cluster_name", "cluster_region", "domain"}
	for name, want := range map[string]string{
		"clustr_name":    ` (did you mean "cluster_name"?)`,
		"CLUSTER_NAME":   ` (did you mean "cluster_name"?)`,
		"cluster_regoin": ` (did you mean "cluster_region"?)`,
		"domian":         ` (did you mean "domain"?)`,
		"zone":           "",
	} {
		if got := suggest.DidYouMean(name, known); got != want {
			t.Errorf("DidYouMean(%q, %q) = %q, want %q", name, known, got, want)
		}
	}
}
