// Package lint reports the orders of a Flux platform that race on a first
// bootstrap, before a cluster finds out: a custom resource applied before
// its CRD (crd-order) or before the operator's admission webhook serves
// (webhook-order), an operator layer Ready before it serves
// (operator-wait), an object in a namespace nothing creates yet, a health
// check on an object nobody creates, ${var} problems of postBuild
// substitution, and a chart that does not render; hints say which layers
// could be one Kustomization (merge).
//
//	rep, err := lint.File(ctx, "platform/stack.yaml", lint.WithCharts("charts"))
//	for _, f := range rep.Findings {
//		fmt.Println(f) // file:line: layer "crs": Kind/ns/name: message [rule]
//		for _, p := range f.Places {
//			fmt.Println("  " + p.String()) // file:line: Kind/ns/name
//		}
//	}
//	if rep.Failing() > 0 { … }
//
// A finding is one problem: the same rule, layer and cause found at
// several places (a ${var} nothing sets, used in forty objects; a custom
// resource applied in every namespace before its CRD) is one Finding
// whose Places list every place, each with its file and line (Group). In
// JSON that is the finding's "places" array, there only when there is
// more than one place; the finding's own file, line and object are the
// first place's.
//
// Stack lints a layering.Builder, Plan a layering.Plan with one
// fluxbuild.Input per layer, Repository (and Tree, which reads it first)
// a Flux repository package fluxrepo read, Fleet every cluster of a fleet. Every layer's manifests are read as
// kustomize-controller builds them and every HelmRelease's chart (found by
// package charts) rendered as helm-controller renders it, both by package
// fluxbuild, the one engine:
// lint sees CRDs, webhooks and namespaces inside charts.
//
// Invariants:
//
//   - A finding is a claim that real Flux fails or races. It is made from
//     what the tree says (a rendered webhook configuration, a CRD in an
//     ancestor layer) or from a documented table (KnownOperators), and
//     says which.
//   - What lint cannot see (a source it cannot read offline, a chart it
//     cannot have) is no finding by itself; the source rule says once what
//     was not read.
//   - The error is only for what stops linting (a cancelled context, a bad
//     Option); everything about the platform is a finding.
//
// Lint reads files and never touches the network itself: charts in OCI
// registries are fetched only through a charts.Fetcher the caller gives.
package lint
