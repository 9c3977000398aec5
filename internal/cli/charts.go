package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/layering"
)

// chartFlags say where lint finds the charts HelmReleases install, and
// which operators it should know when it cannot find them.
type chartFlags struct {
	dirs      []string
	operators []string
}

func (c *chartFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&c.dirs, "charts", nil, "a folder of charts HelmReleases install (CHART/ folders or CHART-VERSION.tgz), so lint sees their CRDs and webhooks (repeatable)")
	fs.StringArrayVar(&c.operators, "operator", nil, "a chart lint cannot get that serves admission webhooks: CHART=GROUP[,GROUP...] (repeatable; adds to the table of known operators)")
}

// lintOptions maps the flags to layering's options.
func (c *chartFlags) lintOptions() ([]layering.LintOption, error) {
	var opts []layering.LintOption
	if len(c.dirs) > 0 {
		opts = append(opts, layering.WithCharts(c.dirs...))
	}
	if len(c.operators) > 0 {
		ops := map[string][]string{}
		for _, o := range c.operators {
			chart, groups, ok := strings.Cut(o, "=")
			if !ok {
				return nil, fmt.Errorf("--operator %q: want CHART=GROUP[,GROUP...]", o)
			}
			ops[chart] = strings.Split(groups, ",")
		}
		opts = append(opts, layering.WithOperators(ops))
	}
	return opts, nil
}
