package fluxbuild

// Input is what one layer of a platform is read from: the layer's source,
// or why it cannot be read offline, and the build a reader of a repository
// did already (package fluxrepo), which the checkers and renderers take
// instead of building again.
type Input struct {
	// Source is the source's artifact as kustomize-controller unpacks it;
	// nil when it cannot be read offline, Unavailable saying why.
	Source      *Source
	Unavailable string
	// Built says Objects and BuildErr are the layer's build from Source.
	Built    bool
	Objects  []*Object
	BuildErr error
}
