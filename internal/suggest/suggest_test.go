package layering

import "testing"

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
		if got := didYouMean(name, known); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", name, got, want)
		}
	}
}
