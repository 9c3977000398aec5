package kinds_test

import (
	"testing"

	"github.com/fluxpack/fluxpack/internal/kinds"
)

func TestClusterScoped(t *testing.T) {
	for kind, want := range map[string]bool{
		"Namespace": true, "ClusterRole": true, "CustomResourceDefinition": true, "ValidatingWebhookConfiguration": true,
		"Deployment": false, "ConfigMap": false, "Role": false, "ClusterIssuer": false,
	} {
		if got := kinds.ClusterScoped(kind); got != want {
			t.Errorf("ClusterScoped(%q) = %v, want %v", kind, got, want)
		}
	}
}
