package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/status"
)

func newPushCmd(f *rootFlags) *cobra.Command {
	var (
		reg          registryFlags
		out          outputFlag
		source       string
		revision     string
		tags         []string
		annotations  []string
		ignorePaths  []string
		allowSecrets bool
		force        bool
		noTreeCache  bool
		fleetFile    fleetFlag
		signing      signFlags
		jobs         int
		wait         bool
		wf           waitFlags
	)
	cmd := &cobra.Command{
		Use:   "push (DIR oci://HOST/REPOSITORY:TAG | --fleet FLEET)",
		Short: "Push a directory as a Flux artifact, unless the tag already holds the same content",
		Long: `Push archives DIR as a Flux artifact (what flux push artifact makes) and pushes
it to the tag, for an OCIRepository to reconcile.

The artifact is reproducible: modes are normalised and created comes from
$SOURCE_DATE_EPOCH, else the commit time of the revision, else the Unix epoch.
If the tag already holds the same content, nothing is uploaded and the tag does
not move, even when --revision differs; --force pushes anyway. The --tag tags
are still pointed at that content, and stderr says of each whether it was
created, moved (from which digest) or already there.

The content is told by the digest of the tar stream. fluxpack keeps it in the
user's cache directory ($XDG_CACHE_HOME/fluxpack/trees, by default
~/.cache/fluxpack/trees) with each file's device, inode, size, and
modification and change times: when the next push of DIR finds every file as
it was, it takes the digest from there and reads no file (a file written to
or replaced gets a new change time, which no program sets back; files changed
in the two seconds before a push are not cached). --no-tree-cache reads and
hashes every file.

--source and --revision default to the Git checkout holding DIR (origin's URL
without credentials, <branch>@sha1:<commit>). Paths matching the default
ignore list, .sourceignore files or --ignore-paths are left out. A plaintext
Kubernetes Secret makes the push fail unless --allow-secrets, and so do IaC
outputs: a file holding an output its tool marks sensitive (Terraform/OpenTofu
"sensitive": true, Pulumi "[secret]") and any outputs file a Stack or Fleet
file of the tree names (spec.vars[].outputs, spec.clusters[].outputs): keep
them outside the pushed folder. So does a tree
with no file left (an empty artifact would make Flux prune all it applied) or
with over 100 MiB of file content (oci.MaxArtifactSize, what pull and Flux's
untar accept).

--sign cosign --key KEY signs the artifact before any tag points at it, in
the format source-controller verifies with a public key (spec.verify.provider
cosign): KEY is a file or env://VAR holding cosign's encrypted key
($COSIGN_PASSWORD decrypts it) or a plain PEM private key (openssl genpkey),
or a KMS key reference SCHEME://KEY, which sigstore's KMS registry resolves
as cosign's --key does: awskms://, gcpkms://, azurekms:// and hashivault://
with sigstore's providers (credentials from the environment, as for cosign),
any other scheme with sigstore's KMS plugin sigstore-kms-SCHEME from $PATH
(the plugin protocol of github.com/sigstore/sigstore/pkg/signature/kms/cliplugin).
--sign notation --key KEY --cert CHAIN signs with notation instead, in the
format source-controller verifies with a trust policy (spec.verify.provider
notation): KEY is a PEM private key, CHAIN the PEM certificate chain (leaf
first); the signature is a referrer of the artifact (the referrers API, or
the sha256-<hex> tag on registries without it).
--sign cosign --keyless signs without a key of one's own, as cosign sign
does: an ephemeral key, certified by Fulcio for the identity of the OIDC
token (--identity-token, a token or a file holding one, else
$SIGSTORE_ID_TOKEN, as CI providers issue for the audience "sigstore"),
the signature logged in Rekor, the sigstore bundle attached as a referrer of
the artifact, where source-controller looks for it and checks it against
spec.verify.matchOIDCIdentity. --fulcio-url and --rekor-url default to the
public-good instances. Keyless signing is untested against a real Fulcio and
Rekor: fluxpack's tests are offline and run it against stand-ins on
loopback.
A push that finds the tag unchanged checks the signature is still there and
adds it if not. If signing fails, no tag moves.

Prints host/repository@sha256:… (or JSON with -o json) on stdout.

With --fleet, every cluster of the fleet file is rendered and its artifact
(the stack's folder, less the fleet's inputs such as the IaC outputs files,
with the cluster's render at the stack's renderedPath) pushed to the
cluster's URL, --jobs clusters at a time; each is skipped when its tag holds
the same content. One line per cluster: "CLUSTER pushed|unchanged
host/repository@sha256:…" or "CLUSTER failed: why" (JSON with -o json); one
cluster's failure does not stop the others, and the exit code is 0 only
when none failed.

--wait then waits, as fluxpack wait does, until every layer of the cluster
the kubeconfig names (--kubeconfig, --context) is Ready and every
Kustomization whose OCIRepository reads the pushed repository applied the
pushed artifact: the revision the OCIRepository reports, TAG@sha256:DIGEST,
matched by the digest, so one that follows another tag of the same artifact
counts. The other Kustomizations (a flux-system Kustomization on Git, say)
must be Ready on what their own source serves; when none reads the
repository (the cluster names the registry by another host), every
Kustomization must apply the digest. It gives up as wait does (--stalled;
--timeout bounds the push and the wait together). Progress and the final
status go to stderr; stdout holds the push's result alone. Exit codes as
wait's: 0 every layer Ready with the artifact, 1 a layer failed for good, 2
an error or --timeout. --wait is for one artifact, not --fleet (wait for
each cluster with fluxpack wait --context).`,
		Example: `  fluxpack push ./platform oci://ghcr.io/acme/platform:$(git rev-parse --short HEAD) --tag latest
  fluxpack push ./platform oci://ghcr.io/acme/platform:main --wait --context staging --timeout 15m
  fluxpack push --fleet platform/fleet.yaml --jobs 8 -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if fleetFile != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if fleetFile != "" && (len(tags) > 0 || force) {
				return fmt.Errorf("--tag and --force are for one artifact, not --fleet")
			}
			if err := wf.check(cmd, wait); err != nil {
				return err
			}
			if wait && fleetFile != "" {
				return fmt.Errorf("--wait is for one artifact, not --fleet: wait for each cluster with fluxpack wait --context")
			}
			ann, err := parseKeyValues("annotation", annotations)
			if err != nil {
				return err
			}
			treeOpts := []oci.TreeOption{oci.WithIgnorePaths(ignorePaths...)}
			if allowSecrets {
				treeOpts = append(treeOpts, oci.WithAllowSecrets())
			}
			opts := append(as[oci.PushOption](reg.options(f.log)), oci.WithGitDefaults(), oci.WithTags(tags...))
			if source != "" {
				opts = append(opts, oci.WithSource(source))
			}
			if revision != "" {
				opts = append(opts, oci.WithRevision(revision))
			}
			if ann != nil {
				opts = append(opts, oci.WithAnnotations(ann))
			}
			if force {
				opts = append(opts, oci.WithForce())
			}
			signer, err := signing.signer()
			if err != nil {
				return err
			}
			if signer != nil {
				opts = append(opts, oci.WithSigner(signer))
			}
			if isTerminal(cmd.ErrOrStderr()) && fleetFile == "" {
				opts = append(opts, oci.WithProgress(func(p oci.Progress) {
					fmt.Fprintf(cmd.ErrOrStderr(), "\ruploading %d/%d bytes", p.Written, p.Total)
				}))
			}
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			if fleetFile != "" {
				cmd.SetContext(ctx)
				return pushFleet(cmd, f.log, string(fleetFile), jobs, out, opts, treeOpts)
			}
			for _, o := range treeOpts {
				opts = append(opts, o)
			}
			if dir := treeCacheDir(); dir != "" && !noTreeCache {
				opts = append(opts, oci.WithTreeCache(dir))
			}
			var watcher *status.Watcher
			if wait {
				// The kubeconfig is read before the push: a cluster that
				// cannot be reached fails the command before anything moves.
				if watcher, err = wf.cluster.watcher(ctx, nil, nil, f.log); err != nil {
					return err
				}
			}

			res, err := oci.Push(ctx, args[0], args[1], opts...)
			if err != nil {
				return err
			}
			warnUnrecorded(cmd.ErrOrStderr(), args[0], res)
			if res.Pushed {
				f.log.Info("pushed", "url", args[1], "digest", res.Digest, "tags", res.Tags, "signed", res.Signed)
			} else {
				f.log.Info("unchanged: the tag already holds this content", "url", args[1], "digest", res.Digest)
				logTagUpdates(f.log, res)
				if res.Signed {
					f.log.Info("signature added: the artifact had none made with the key", "url", args[1], "digest", res.Digest)
				}
			}
			if out == "json" {
				err = writeJSON(cmd.OutOrStdout(), res)
			} else {
				_, err = fmt.Fprintln(cmd.OutOrStdout(), res.Ref())
			}
			if err != nil || watcher == nil {
				return err
			}
			return wf.run(ctx, watcher, waitRun{artifact: args[1], revision: res.Digest, timeout: reg.timeout, stdout: cmd.ErrOrStderr(), stderr: cmd.ErrOrStderr()})
		},
	}
	reg.bind(cmd)
	out.bind(cmd)
	fs := cmd.Flags()
	fs.StringVar(&source, "source", "", "org.opencontainers.image.source, e.g. the Git URL (default: the checkout's origin)")
	fs.StringVar(&revision, "revision", "", "org.opencontainers.image.revision, <branch|tag>@sha1:<commit> (default: the checkout's HEAD)")
	fs.StringArrayVar(&tags, "tag", nil, "another tag to point at the artifact (repeatable)")
	fs.StringArrayVarP(&annotations, "annotation", "a", nil, "manifest annotation key=value (repeatable)")
	fs.StringSliceVar(&ignorePaths, "ignore-paths", nil, "more paths to ignore, .gitignore syntax (after the defaults: "+joinComma(oci.DefaultIgnorePaths())+")")
	fs.BoolVar(&allowSecrets, "allow-secrets", false, "allow plaintext Kubernetes Secrets and IaC outputs files (sensitive values, files a stack or fleet names) in the artifact")
	fs.BoolVar(&force, "force", false, "push even if the tag already holds the same content")
	fs.BoolVar(&noTreeCache, "no-tree-cache", false, "read and hash every file, even if the tree cache says none changed since the last push")
	fleetFile.bind(cmd)
	fs.IntVar(&jobs, "jobs", fleet.DefaultJobs, "with --fleet: clusters rendered and pushed at once")
	signing.bind(cmd)
	fs.BoolVar(&wait, "wait", false, "then wait until every layer of the cluster is Ready and applied the pushed artifact, as fluxpack wait does")
	wf.bind(cmd)
	return cmd
}

// logTagUpdates says what an unchanged push did to each extra tag: the
// content is unchanged, but a tag may still have been created or moved.
func logTagUpdates(log *slog.Logger, res *oci.Result) {
	for _, u := range res.TagUpdates {
		url := "oci://" + res.Repository + ":" + u.Tag
		switch u.Change {
		case oci.TagCreated:
			log.Info("tag created", "url", url, "digest", res.Digest)
		case oci.TagMoved:
			log.Info("tag moved", "url", url, "from", u.From, "digest", res.Digest)
		default:
			log.Info("tag unchanged: it already points at this content", "url", url, "digest", res.Digest)
		}
	}
}

// treeCacheDir is where push keeps the content digests of trees
// (oci.WithTreeCache): fluxpack/trees in the user's cache directory, or ""
// when there is none ($HOME and $XDG_CACHE_HOME unset).
func treeCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "fluxpack", "trees")
}

// warnUnrecorded says on w what the pushed artifact does not record of its
// origin: Flux shows an artifact's source and revision, and without them
// nobody can tell which commit a cluster runs.
func warnUnrecorded(w io.Writer, dir string, res *oci.Result) {
	var missing []string
	if res.Source == "" {
		missing = append(missing, "no source")
	}
	if res.Revision == "" {
		missing = append(missing, "no revision")
	}
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(w, "fluxpack: the artifact records %s: %s is not in a Git checkout with an origin and a commit, and --source/--revision were not given\n",
		strings.Join(missing, " and "), dir)
}
