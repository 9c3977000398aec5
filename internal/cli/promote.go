package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/status"
)

func newPromoteCmd(f *rootFlags) *cobra.Command {
	var (
		reg         registryFlags
		out         outputFlag
		from, key   string
		trustPolicy string
		certs       []string
		identity    identityFlags
		fleetFile   fleetFlag
		render      bool
		other       bool
		wait        bool
		wf          waitFlags
		mustBeReady bool
		fromContext string
	)
	cmd := &cobra.Command{
		Use:   "promote (oci://HOST/REPOSITORY:TAG | --fleet FLEET CLUSTER [--render]) --from SOURCE",
		Short: "Move a tag to the artifact another tag holds: staging to prod, without rebuilding",
		Long: `Promote points the tag of the URL at the artifact --from names, as it is:
the "dev → staging → prod" move without rendering or pushing again. --from is
an oci:// URL (by tag or digest) or a tag of the same repository.

With --fleet, the argument and --from are clusters of the fleet file, and
promotion is by revision: each cluster's artifact holds its own render (its
OCIRepository, its variables), so the cluster's tag moves to the cluster's
OWN artifact of the source revision --from's artifact holds (push --fleet
tags every cluster's artifact with its revision, TAG-rev-COMMIT). If the
cluster has no artifact of that revision, promote says so and moves nothing;
another cluster's artifact is never copied. With --render it makes that
artifact instead: it renders the cluster from the fleet's stack as push
--fleet does, pushes it to the revision's tag, then moves the cluster's tag
to it. The stack's files are the local checkout's, so the checkout must be
at that revision (HEAD at its commit, no change to a tracked file of the
stack's folder): else promote refuses, naming the revision to check out, and
pushes nothing. The artifact it pushes is unsigned: --render is refused
with the verification flags (sign with push --fleet at that revision).

With --key (a cosign public key: a file, env://VAR or a KMS key), the
keyless --certificate-* flags, or --trust-policy and --cert (notation), all
as for verify, the artifact must verify first, as source-controller will
check it, else nothing moves. Into another repository the artifact is
copied with its signatures (cosign's and notation's), the tag last. When the tag already holds the artifact nothing is written.

--wait then waits, as push --wait does, until every layer of the promoted
cluster is Ready and every Kustomization reading the promoted repository
applied the promoted artifact (matched by its digest). The cluster is the
kubeconfig's --context; with --fleet, by default the context named as the
cluster when the kubeconfig has one. It gives up as wait does (--stalled;
--timeout bounds the promotion and the wait together); progress and the
final status go to stderr, stdout holds the promotion's result alone.

With --fleet, --require-ready promotes only a revision the cluster promoted
from runs: before anything moves, it reads that cluster once (--from-context,
by default the kubeconfig context named as the --from cluster; a fleet file
names no context) and refuses unless every layer there is Ready and every
Kustomization reading --from's repository applied the artifact its tag
holds, naming the layer that blocks and its message. It does not wait for
the artifact (run fluxpack wait on that cluster first), only for a reconcile
in progress of the artifact a layer has already applied (a requeue, an
interval), up to --stalled.

Exit 0 promoted (and with --wait, every layer Ready with the artifact), 1
the artifact does not verify, --require-ready refused, or a layer failed for
good while waiting, 2 an error or --timeout.

Prints host/repository:tag@sha256:… (or JSON with -o json); the log says
whether the tag moved.`,
		Example: `  fluxpack promote oci://ghcr.io/acme/platform:prod --from staging --key cosign.pub
  fluxpack promote oci://ghcr.io/acme/platform/prod:main --from oci://ghcr.io/acme/platform/staging:main
  fluxpack promote --fleet platform/fleet.yaml prod --from staging
  fluxpack promote --fleet platform/fleet.yaml prod --from staging --render
  fluxpack promote --fleet platform/fleet.yaml prod --from staging --require-ready --from-context kind-staging --wait --context kind-prod`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if from == "" {
				return fmt.Errorf("--from is required")
			}
			if render && fleetFile == "" {
				return fmt.Errorf("--render is for --fleet: a cluster's artifact of a revision is rendered from the fleet's stack")
			}
			if mustBeReady && fleetFile == "" {
				return fmt.Errorf("--require-ready is for --fleet: it reads the cluster of the fleet's --from cluster")
			}
			if fromContext != "" && !mustBeReady {
				return fmt.Errorf("--from-context is for --require-ready")
			}
			if err := wf.check(cmd, wait || mustBeReady); err != nil {
				return err
			}
			to, src := args[0], from
			var fl *fleet.Fleet
			if fleetFile != "" {
				var err error
				if fl, err = fleet.Load(string(fleetFile)); err != nil {
					return err
				}
				if to, err = fl.Artifact(args[0]); err != nil {
					return err
				}
			} else if !strings.HasPrefix(src, oci.Scheme) {
				// A tag of the destination's repository.
				repo := to
				if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
					repo = repo[:i]
				}
				src = repo + ":" + src
			}
			opts := as[oci.PromoteOption](reg.options(f.log))
			keys, err := keyOptions(key, trustPolicy, certs, &identity)
			if err != nil {
				return err
			}
			for _, k := range keys {
				opts = append(opts, k)
			}
			if other {
				opts = append(opts, oci.WithOtherCluster())
			}
			if render && len(keys) > 0 {
				return fmt.Errorf("--render pushes an unsigned artifact, which --key, --trust-policy or --certificate-identity would refuse: push the fleet with --sign at that revision, then promote")
			}
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			// The clusters are reached before anything moves: a kubeconfig
			// that does not name them fails the command first.
			var target *status.Watcher
			if wait {
				c := wf.cluster
				if fl != nil && !cmd.Flags().Changed("context") {
					if c, err = c.forFleetCluster(args[0], "", "context", true); err != nil {
						return err
					}
				}
				if target, err = c.watcher(ctx, nil, nil, f.log); err != nil {
					return err
				}
			}
			var res *oci.Result
			if fl != nil {
				po := fleet.PromoteOptions{Read: as[oci.ListOption](reg.options(f.log)), Promote: opts, Render: render}
				if render {
					po.Push = []fleet.Option{fleet.WithPushOptions(as[oci.PushOption](reg.options(f.log))...), fleet.WithLogger(f.log)}
				}
				if mustBeReady {
					c, err := wf.cluster.forFleetCluster(from, fromContext, "from-context", false)
					if err != nil {
						return err
					}
					w, err := c.watcher(ctx, nil, nil, f.log)
					if err != nil {
						return err
					}
					po.RequireReady = func(ctx context.Context, url, digest string) error {
						_, err := w.Require(ctx, status.WithArtifact(url, digest), status.WithStalled(wf.stalled))
						return err
					}
				}
				res, err = fleet.Promote(ctx, fl, args[0], from, po)
			} else {
				res, err = oci.Promote(ctx, src, to, opts...)
			}
			var notReady *status.NotReadyError
			if errors.Is(err, oci.ErrNotVerified) || errors.As(err, &notReady) {
				// A failed check, as verify reports it, or the cluster
				// promoted from not Ready on its artifact: exit 1, nothing
				// moved.
				return &FindingError{Msg: err.Error()}
			}
			if err != nil {
				return err
			}
			if res.Pushed {
				f.log.Info("promoted: the tag moved", "from", oci.RedactURL(src), "to", oci.RedactURL(to), "digest", res.Digest)
			} else {
				f.log.Info("unchanged: the tag already holds the artifact", "to", oci.RedactURL(to), "digest", res.Digest)
			}
			if out == "json" {
				err = writeJSON(cmd.OutOrStdout(), res)
			} else {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s:%s@%s\n", res.Repository, res.Tag, res.Digest)
			}
			if err != nil || target == nil {
				return err
			}
			return wf.run(ctx, target, waitRun{artifact: to, revision: res.Digest, timeout: reg.timeout, stdout: cmd.ErrOrStderr(), stderr: cmd.ErrOrStderr()})
		},
	}
	reg.bind(cmd)
	out.bind(cmd)
	fleetFile.bind(cmd)
	cmd.Flags().StringVar(&from, "from", "", "the artifact to promote: an oci:// URL, a tag of the same repository, or with --fleet a cluster")
	cmd.Flags().StringVar(&key, "key", "", "cosign public key the artifact must verify with first: a file, env://VAR or a KMS key SCHEME://KEY")
	cmd.Flags().StringVar(&trustPolicy, "trust-policy", "", "notation trust policy (trustpolicy.json) the artifact must verify with first, with --cert")
	cmd.Flags().StringArrayVar(&certs, "cert", nil, "notation trust store for --trust-policy: a certificate file or a directory of *.crt/*.pem files (repeatable)")
	cmd.Flags().BoolVar(&other, "other-cluster", false, "move a tag that serves one cluster of a fleet to an artifact fleet push rendered for another (its variables and source), which is refused otherwise")
	cmd.Flags().BoolVar(&render, "render", false, "with --fleet: when the cluster has no artifact of the revision, render and push it from the checkout, which must be at that revision")
	identity.bind(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "then wait until every layer of the promoted cluster is Ready and applied the promoted artifact, as fluxpack wait does")
	cmd.Flags().BoolVar(&mustBeReady, "require-ready", false, "with --fleet: promote only if every layer of the --from cluster applied the artifact its tag holds and is Ready")
	cmd.Flags().StringVar(&fromContext, "from-context", "", "for --require-ready: the kubeconfig context of the --from cluster (default: the context named as that cluster)")
	wf.bind(cmd)
	return cmd
}
