// Package oci builds Flux artifacts from a directory of manifests and moves
// them to and from any OCI registry, for Flux's OCIRepository
// (source.toolkit.fluxcd.io/v1).
//
// An artifact is what `flux push artifact` and github.com/fluxcd/pkg/oci
// write: an OCI image manifest whose config has media type
// application/vnd.cncf.flux.config.v1+json and whose one layer is the
// directory as tar+gzip (application/vnd.cncf.flux.content.v1.tar+gzip),
// annotated with org.opencontainers.image.created, .source and .revision.
// source-controller reports it as <tag>@sha256:<manifest digest>.
//
//	res, err := oci.Push(ctx, "./platform", "oci://ghcr.io/acme/platform:v1",
//		oci.WithGitDefaults(),   // source and revision from the checkout
//		oci.WithTags("latest"),
//	)
//	// res.Pushed is false when the tag already held the same content.
//
// Build makes the artifact without sending it; Diff compares a directory with
// a tag and names the files that differ; Pull extracts an artifact; Tag adds
// tags; List lists them with what each points at.
//
// To push many artifacts that share most of their files (a fleet's, one
// per cluster), read the directory once with ReadTree, give each artifact
// its own files in memory with Tree.With, and push it with PushTree: the
// same artifact as Push of those files on disk, with no file read or
// written per artifact.
//
// Invariants:
//
//   - Reproducible. Modes are normalised (directories, the root included, and
//     executables 0755; other files 0644), owners and times are zeroed, the
//     walk is lexical and created is the Unix epoch unless WithCreated or
//     WithGitDefaults gives a time, always in UTC, and the layer is gzipped by
//     the github.com/klauspost/compress version go.mod pins, not by the Go
//     release's compress/gzip. So the same tree with the same metadata gives
//     the same manifest digest on any machine, umask, time zone or Go
//     release. For a tree whose modes are already normal, the tar stream is
//     byte for byte what `flux build artifact` makes of it; the gzip bytes
//     are too only when that flux's compressor writes what fluxpack's does
//     (a flux built with Go 1.27: its compress/gzip writes what
//     klauspost/compress v1.19.2 writes).
//   - Push only what changed. Push hashes the uncompressed tar stream and
//     compares it with the dev.fluxpack.content.digest annotation of the tag's
//     layer (or, for artifacts pushed by other tools, with the hash of their
//     layer's uncompressed stream, downloaded: never with gzip bytes, which
//     depend on the compressor). Same content: nothing is uploaded and the
//     tag does not move, even when the revision differs, so a commit that did
//     not touch the platform does not roll a new revision to every cluster.
//   - Tags last. Blobs go first, then the manifest under its tag, then extra
//     tags, so an interrupted push never leaves a tag on an incomplete
//     artifact. A blob upload that fails or is interrupted (ctx done) is
//     cancelled at the registry (DELETE of its upload session), so no
//     partial upload is left there.
//   - Nothing silently dropped. Ignore rules are the flux CLI's defaults
//     (DefaultIgnorePaths), the tree's .sourceignore files and WithIgnorePaths,
//     in .gitignore syntax. Symlinks that stay in the tree are followed;
//     symlinks leaving it, symlink cycles and special files are errors.
//   - Bounded and never empty. Push refuses a tree whose files add up to
//     more than MaxArtifactSize (100 MiB, what Pull and Flux's untar accept),
//     and a tree with no file left once the ignore rules apply: an empty
//     artifact would make every Kustomization reconciling it prune all it
//     applied. Pull refuses artifacts over MaxPullSize unpacked.
//   - No plaintext Secrets. A v1 Secret with data or stringData that is not
//     SOPS-encrypted makes Build and Push fail naming file:line, unless
//     WithAllowSecrets.
//   - Credentials are never printed: they come from the docker config
//     keychain, WithCreds or WithKeychain and travel only in headers; URLs in
//     errors are redacted, and an artifact URL holding credentials is
//     refused.
//
// Errors name the directory and the oci:// URL. Problems with one file are
// *FileError (path and line); ErrSymlinkEscape, ErrSymlinkCycle,
// ErrSpecialFile, ErrPlaintextSecret, ErrEmptyTree, ErrTooBig and
// ErrInvalidOption can be tested with errors.Is.
//
// Signing. Push signs with the Signer WithSigner gives, before any tag
// points at the artifact, so a tag never moves to an unsigned artifact; an
// unchanged push has the signer add its signature if it is missing
// (Result.Signed). Verify and Promote check signatures with the Verifier
// WithVerifier gives, and answer Verified, Unsigned, BadSignature or
// Skipped. This package compiles in no signing stack: package
// github.com/fluxpack/fluxpack/oci/cosign signs and verifies with cosign
// (key files, KMS keys, keyless through Fulcio and Rekor), package
// github.com/fluxpack/fluxpack/oci/notation with notation; a program
// imports the one it needs. Promote copies both kinds of signature (the
// sha256-<hex>.sig tag, notation and sigstore-bundle referrers) with the
// artifact, which needs neither package.
//
// This package knows nothing of layers, Kustomizations or variables (see
// packages layering and substitute), does no RFC 3161 timestamping,
// and does not log in to cloud providers.
package oci
