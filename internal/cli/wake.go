package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxrepo"
)

func newWakeCmd(f *rootFlags) *cobra.Command {
	var (
		repo repoFlags
		c    fluxrepo.WakeConfig
	)
	cmd := &cobra.Command{
		Use:   "wake ENTRY -d DIR [--secret-file FILE] [--check]",
		Short: "Write the notification-controller objects that wake each Kustomization's dependents the moment it is Ready",
		Long: `Wake reads the Flux tree of ENTRY as lint does and writes to DIR, a folder
the cluster's entry point applies (add it to ENTRY's kustomization.yaml, if
it has one), the objects that make stock Flux reconcile each Kustomization's
dependents the moment it becomes Ready, instead of polling them every
--requeue-dependency (30s): a notification-controller Provider, Alert and
Receiver (DIR/wake.yaml, applied with the Kustomizations, so that the
Receiver is Ready before their first events), and a Kustomization beside
them that applies nothing (DIR/objects) and is Ready once the Receiver is,
whose own Ready event then wakes every Kustomization with dependencies once,
for the events sent before the Receiver was ready.

The Secret they read (the token, and the Receiver's URL, which holds a
digest of it) goes to --secret-file, outside the repository: apply it to the
cluster, or encrypt it with SOPS. Running wake again keeps the file's token
and rewrites only the files the graph changed. --check writes nothing and
exits 1 when DIR is stale, for CI.`,
		Example: `  fluxpack wake clusters/prod -d clusters/prod/wake --secret-file ../wake-secret.yaml
  kubectl apply -f ../wake-secret.yaml
  fluxpack wake clusters/prod -d clusters/prod/wake --check`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := repo.options()
			if err != nil {
				return err
			}
			res, err := fluxrepo.Wake(cmd.Context(), args[0], c, opts...)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if c.Check {
				if res.Stale() {
					for _, p := range res.Changed {
						fmt.Fprintf(out, "stale: %s\n", filepath.Join(c.Dir, p))
					}
					return &FindingError{Msg: fmt.Sprintf("the wake objects in %s are stale: run fluxpack wake %s -d %s again", c.Dir, args[0], c.Dir)}
				}
				fmt.Fprintf(out, "%s is up to date\n", c.Dir)
				return nil
			}
			for _, p := range res.Changed {
				fmt.Fprintf(out, "wrote %s\n", filepath.Join(c.Dir, p))
			}
			if len(res.Changed) == 0 {
				fmt.Fprintf(out, "%s is up to date\n", c.Dir)
			}
			switch {
			case res.SecretChanged:
				fmt.Fprintf(out, "wrote the wake Secret to %s: apply it to the cluster (it never goes into the repository)\n", res.SecretFile)
			case res.SecretFile == "":
				f.log.Warn("no --secret-file: the wake Secret was not written; without it the Receiver is not Ready and the Kustomizations poll as before",
					"secret", "Secret/"+res.Wake.Receiver.Namespace+"/"+res.Wake.Receiver.Name)
			}
			var ns []string
			for _, r := range res.Wake.Receiver.Spec.Resources {
				if r.Namespace != "" && !slices.Contains(ns, r.Namespace) {
					ns = append(ns, r.Namespace)
				}
			}
			if len(ns) > 0 {
				slices.Sort(ns)
				f.log.Info("the Receiver wakes Kustomizations of other namespaces: notification-controller must run without --no-cross-namespace-refs",
					"namespaces", strings.Join(ns, ","))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&c.Dir, "dir", "d", "", "the folder the wake objects go to, inside the repository, applied by ENTRY (required)")
	fs.StringVar(&c.SecretFile, "secret-file", "", "where the wake Secret goes, outside the repository (its token is kept when run again)")
	fs.StringVar(&c.ReceiverURL, "receiver-url", "", "where notification-controller reaches its webhook receiver (default http://webhook-receiver.flux-system.svc.cluster.local); only in the Secret")
	fs.BoolVar(&c.Check, "check", false, "write nothing; exit 1 when the folder's objects are stale")
	_ = cmd.MarkFlagRequired("dir")
	repo.bind(cmd)
	return cmd
}
