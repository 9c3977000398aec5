// Package review says what a change to a Flux repository does to a
// cluster, for the person reviewing the pull request: the objects Flux
// would apply differently, the races (lint findings) it introduces and
// fixes, what it does to the bootstrap order and its stock-Flux cost, and
// the container images it adds, removes or retags.
//
// Compare takes two copies of a repository (Extract writes a Git revision
// into a folder, without a checkout; DefaultBase finds the merge-base with
// the upstream branch) and a cluster's entry point:
//
//	rev, _ := review.DefaultBase(".")
//	base, cleanup, _ := review.Extract(ctx, ".", rev, "")
//	defer cleanup()
//	report, err := review.Compare(ctx, base, ".", "clusters/production")
//	report.WriteText(os.Stdout, review.TextOptions{})
//
// Rendering goes through the one engine (package fluxrepo reads the tree,
// package fluxbuild renders each Kustomization with its postBuild
// substitution, package lint renders HelmReleases as helm-controller
// does). Only the producers whose inputs the changed files feed are
// rendered (Affected: a file feeds a layer where the layer's source holds
// it, through an ArtifactGenerator's copies, a GitRepository's includes
// and ignore rules; fluxrepo.View), unless WithAll; a producer that does not render on
// a side is reported in NotRendered and its objects are left out on both
// sides, never shown as added or removed. Rendered, NotRendered and
// Skipped add up to every producer. A HelmRelease is named as its
// Kustomization substitutes it (HelmRelease/media/radarr where the file
// says ${APP}); one whose name cannot be substituted is named with its
// layer, so distinct releases are never one producer. A flux-operator
// ResourceSet a layer applies is a producer too (ResourceSet/NAMESPACE/NAME):
// the objects its templates make from its inputs, as the layer rendered it
// (fluxrepo.ExpandResourceSets), so a change to a template or an input is a
// change to every object it makes. One whose inputs come from
// ResourceSetInputProviders is not rendered, and neither are the layers
// of the other side it generates there. Likewise, when a Kustomization
// does not build or render on a side, the layers of the other side that
// it applies are not rendered there: kustomize-controller applies and
// prunes nothing of it, so the cluster keeps them (not removed, nor
// added); a finding of such a layer is neither fixed nor introduced, and
// the bootstrap order keeps it. The races need every layer on
// both sides: changed-only, the layers no changed file feeds (the same on
// both sides) are read once, for their objects' identities where lint
// needs no more (fluxrepo.WithIdentityOnly), and shared by the two sides;
// the layers the change feeds are read whole on each side.
//
// The changed files (ChangedFiles) are those Git would list: in a tree
// that is a Git working tree, an untracked file that .gitignore,
// .git/info/exclude or core.excludesFile ignores (a render in out/, an
// IaC outputs file) is no change, nor is a nested repository. An IaC
// outputs file a stack names outside the repository, or ignored by Git,
// is in no revision: CompareStack and CompareFleet read it where the
// working tree has it on both sides, and say so (Report.Outputs). Paths
// under either root in messages (findings, why a producer did not
// render) are written relative to the root, so a report names no
// temporary folder and reads the same on every run.
//
// DiffObjects matches objects by group, kind, namespace and name, fields
// by path, and list entries by their key (name, mountPath, containerPort,
// port, key), so a reorder is one FieldMoved; the entries of a list
// without a key are matched by content (a longest common subsequence),
// so an insertion is one FieldAdded. A Secret's values never leave the
// package: fields under data and stringData say only that they changed.
// Nor does a SOPS ciphertext (ENC[AES256_GCM,…], from a file SOPS
// encrypts or substituted from one): it reads "(sops-encrypted)", or
// "(sops-encrypted, changed)" where the other side holds another. Labels
// and annotations that change with every release (DefaultStripAttrs) are
// left out.
//
// Images are read from the rendered containers; for a HelmRelease whose
// chart is not rendered, from its spec.values (image.repository and
// image.tag, or image: REPO:TAG, under any key), marked FromValues. The
// findings carry lint's coverage: in how many layers races were checked,
// and why not in the others; every format says it.
//
// Reports print as text (WriteText), pull-request markdown
// (WriteMarkdown), GitHub workflow commands (WriteGitHub), SARIF for code
// scanning (WriteSARIF), unified diffs (WriteUnified) and JSON (the
// Report's fields).
//
// The package reads files, Git objects, the Git index and ignore files; it
// never touches the network, a cluster, or the working tree's Git state.
package review
