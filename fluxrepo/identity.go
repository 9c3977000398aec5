package fluxrepo

import (
	"strings"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// WithIdentityOnly reads the objects of the tree's plain directories for
// their identity only (fluxbuild.WithIdentityOnly: apiVersion, kind and
// metadata) when neither needs(apiVersion, kind) nor Read itself wants
// more of them (it reads Flux's own objects, ConfigMaps and Secrets
// whole): for a caller that asks what each layer applies, not what the
// objects hold, such as lint given lint.ReadsContent. An error in the
// rest of such an object's document goes unseen. Render and
// RenderUnresolved still render a layer from its files, whole.
func WithIdentityOnly(needs func(apiVersion, kind string) bool) Option {
	return funcOption(func(c *config) error {
		if needs == nil {
			return errdefs.InvalidOption("WithIdentityOnly: nil needs")
		}
		c.needs = needs
		return nil
	})
}

// readsContent reports whether Read reads more than the identity of an
// object of kind: Flux's objects (sources, Kustomizations, HelmReleases,
// ArtifactGenerators, flux-operator's FluxInstances and ResourceSets)
// and the ConfigMaps and Secrets that serve their variables.
func readsContent(apiVersion, kind string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return kind == "ConfigMap" || kind == "Secret"
	}
	return strings.HasSuffix(group, "fluxcd.io") || group == fluxInstanceGroup
}
