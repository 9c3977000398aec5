package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/status"
)

// clusterFlags say which cluster to read, as kubectl and flux do.
type clusterFlags struct {
	kubeconfig string
	context    string
	namespace  string
}

func (c *clusterFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&c.context, "context", "", "the kubeconfig context (default: its current context)")
	fs.StringVarP(&c.namespace, "namespace", "n", "", "read this namespace only (default: all namespaces)")
}

// restConfig loads the kubeconfig as kubectl does.
func (c *clusterFlags) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.kubeconfig != "" {
		rules.ExplicitPath = c.kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.UserAgent = "fluxpack"
	return cfg, nil
}

// watcher builds the status watcher: the cluster from the flags, and
// lint's findings on ENTRY (when given) as the explainer.
func (c *clusterFlags) watcher(ctx context.Context, repo *repoFlags, args []string, log *slog.Logger) (*status.Watcher, error) {
	cfg, err := c.restConfig()
	if err != nil {
		return nil, err
	}
	var opts []status.Option
	if c.namespace != "" {
		opts = append(opts, status.WithNamespace(c.namespace))
	}
	if len(args) == 1 {
		ex, err := lintExplainer(ctx, repo, args[0])
		if err != nil {
			return nil, err
		}
		opts = append(opts, status.WithExplainer(ex))
		log.Info("linted the repository to explain failures with its findings", "entry", args[0], "findings", len(ex))
	}
	return status.New(cfg, opts...)
}

// findingsExplainer explains a failure with lint's finding of the same rule
// on the same layer.
type findingsExplainer []lint.Finding

func (f findingsExplainer) Explain(q status.Query) (status.Explanation, bool) {
	for _, fi := range f {
		if fi.Layer != q.Layer.Name || (q.Rule != "" && string(fi.Rule) != q.Rule) {
			continue
		}
		x := status.Explanation{Rule: string(fi.Rule), Finding: fi.Marked()}
		if fi.File != "" {
			x.Finding = errdefs.Place(fi.File, fi.Line) + ": " + fi.Marked()
		}
		if len(fi.DependOn) > 0 {
			d := fi.DependOn[0]
			x.Edge = fmt.Sprintf("%s dependsOn %s", fi.Layer, d)
			x.Fix = fmt.Sprintf("add %q to spec.dependsOn of layer %q", d, fi.Layer)
			if fi.LayerFile != "" {
				x.Fix += " (" + errdefs.Place(fi.LayerFile, fi.LayerLine) + ")"
			}
		}
		return x, true
	}
	return status.Explanation{}, false
}

// lintExplainer lints the repository at entry as `fluxpack lint ENTRY`
// does (its --root, --source and --external) and keeps its findings.
func lintExplainer(ctx context.Context, repo *repoFlags, entry string) (findingsExplainer, error) {
	opts, err := repo.options()
	if err != nil {
		return nil, err
	}
	rep, err := lint.Tree(ctx, entry, opts, append(repo.lintOptions(), lint.WithDiscovery(repo.discovery()))...)
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", entry, err)
	}
	return findingsExplainer(rep.Findings), nil
}
