package cli

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// forFleetCluster returns the flags that reach cluster of a fleet: a fleet
// file names no kubeconfig context, so it is given (given), else the
// kubeconfig's context named as the cluster when there is one. Without
// either, it returns c itself when fallback (its --context, else the
// current context), or an error naming flag.
func (c clusterFlags) forFleetCluster(cluster, given, flag string, fallback bool) (clusterFlags, error) {
	if given != "" {
		c.context = given
		return c, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.kubeconfig != "" {
		rules.ExplicitPath = c.kubeconfig
	}
	cfg, err := rules.Load()
	if err != nil {
		return c, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	if _, ok := cfg.Contexts[cluster]; ok {
		c.context = cluster
		return c, nil
	}
	if fallback {
		return c, nil
	}
	return c, fmt.Errorf("the kubeconfig has no context named %q, and the fleet file names none for cluster %q: give its context with --%s", cluster, cluster, flag)
}
