// Package charts finds the chart a Flux HelmRelease installs and renders
// it as helm-controller does (fluxbuild.RenderRelease): in a source a
// layer reads (a GitRepository's or Bucket's path), by name in folders of
// charts (WithDirs), or fetched from its registry (WithFetcher); its
// valuesFrom served by the ConfigMaps and Secrets the platform applies.
//
//	f, err := charts.New(charts.WithDirs("charts"))
//	rels, err := charts.Releases(ctx, repo.Plan, repo.Inputs, nil, f)
//
// It sits beside package fluxbuild, the engine: fluxbuild answers "what
// would kustomize-controller apply" and, given a chart, "what would
// helm-controller install"; charts answers "which chart". A chart that
// cannot be had offline is ErrUnavailable, not a failure: what is inside
// it is unknown. Package lint renders every chart this way to see the
// CRDs, webhooks and namespaces inside them; package fluxrepo's
// PreviewRelease and package review's diff print what they render.
package charts
