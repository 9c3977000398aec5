package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/oci"
)

// chartsOnline is the --charts value that lets lint pull OCI charts from
// their registries.
const chartsOnline = "online"

// chartFlags say where lint finds the charts HelmReleases install, and
// which operators it should know when it cannot find them.
type chartFlags struct {
	dirs      []string
	operators []string
	registry  registryFlags // for --charts online
}

func (c *chartFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&c.dirs, "charts", nil, "a folder of charts HelmReleases install (CHART/ folders or CHART-VERSION.tgz), so lint sees their CRDs and webhooks (repeatable); \""+chartsOnline+"\" pulls OCI charts no folder holds from their registry, with the registry flags (./"+chartsOnline+" for a folder of that name)")
	fs.StringArrayVar(&c.operators, "operator", nil, "a chart lint cannot get that serves admission webhooks: CHART=GROUP[,GROUP...] (repeatable; adds to the table of known operators)")
	c.registry.bind(cmd)
}

// lintOptions maps the flags to layering's options. With --charts online,
// the charts are pulled into a temporary directory that done removes, and
// the context returned has the --timeout deadline; offline, it is ctx.
func (c *chartFlags) lintOptions(ctx context.Context, log *slog.Logger) (_ context.Context, opts []lint.Option, done func(), err error) {
	done = func() {}
	var dirs []string
	online := false
	for _, d := range c.dirs {
		if d == chartsOnline {
			online = true
		} else {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) > 0 {
		opts = append(opts, lint.WithCharts(dirs...))
	}
	if len(c.operators) > 0 {
		ops := map[string][]string{}
		for _, o := range c.operators {
			chart, groups, ok := strings.Cut(o, "=")
			if !ok {
				return nil, nil, nil, fmt.Errorf("--operator %q: want CHART=GROUP[,GROUP...]", o)
			}
			ops[chart] = strings.Split(groups, ",")
		}
		opts = append(opts, lint.WithOperators(ops))
	}
	if !online {
		return ctx, opts, done, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tmp, err := os.MkdirTemp("", "fluxpack-charts-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating the directory of pulled charts: %w", err)
	}
	fetcher, err := oci.NewChartFetcher(tmp, c.registry.pullOptions(log)...)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, nil, nil, err
	}
	ctx, cancel := c.registry.context(ctx)
	done = func() {
		cancel()
		_ = os.RemoveAll(tmp)
	}
	return ctx, append(opts, lint.WithChartFetcher(fetcher)), done, nil
}
