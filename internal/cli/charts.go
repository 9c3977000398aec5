package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/charts"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/sources"
)

// chartsOnline is the --charts value that lets lint pull OCI charts from
// their registries.
const chartsOnline = "online"

// chartFlags say where lint finds the charts HelmReleases install, and
// which operators it should know when it cannot find them.
type chartFlags struct {
	dirs      []string
	operators []string
	sources   string
	registry  registryFlags // for --charts online and --sources online

	fetcher *sources.Fetcher // with --sources online, once lintOptions ran
	// chartOpts say the same as lintOptions' options to package charts.
	chartOpts []charts.Option
}

// finder finds charts as the flags say, once lintOptions ran.
func (c *chartFlags) finder() (*charts.Finder, error) { return charts.New(c.chartOpts...) }

// The values of --sources.
const (
	sourcesOffline = "offline"
	sourcesOnline  = "online"
)

func (c *chartFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&c.dirs, "charts", nil, "a folder of charts HelmReleases install (CHART/ folders or CHART-VERSION.tgz), so lint sees their CRDs and webhooks (repeatable); \""+chartsOnline+"\" pulls OCI charts no folder holds from their registry, with the registry flags (./"+chartsOnline+" for a folder of that name)")
	fs.StringVar(&c.sources, "sources", sourcesOffline, "\""+sourcesOnline+"\" fetches the GitRepositories, OCIRepositories and charts (HTTP and OCI Helm repositories, version ranges) the repository names but does not hold, as source-controller resolves them, into $XDG_CACHE_HOME/fluxpack/sources, with the registry flags, $FLUXPACK_GIT_CREDS (user:token) for Git over HTTPS, $FLUXPACK_GIT_SSH_KEY (a private key file) and $FLUXPACK_GIT_KNOWN_HOSTS (default ~/.ssh/known_hosts) for Git over SSH (else the SSH agent); \""+sourcesOffline+"\" reads files only")
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
		c.chartOpts = append(c.chartOpts, charts.WithDirs(dirs...))
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
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch c.sources {
	case sourcesOffline, "":
	case sourcesOnline:
		f, err := c.newFetcher(log)
		if err != nil {
			return nil, nil, nil, err
		}
		c.fetcher = f
		ctx, cancel := c.registry.context(ctx)
		c.chartOpts = append(c.chartOpts, charts.WithFetcher(f))
		return ctx, append(opts, lint.WithChartFetcher(f)), cancel, nil
	default:
		return nil, nil, nil, fmt.Errorf("--sources %q: want %s or %s", c.sources, sourcesOffline, sourcesOnline)
	}
	if !online {
		return ctx, opts, done, nil
	}
	tmp, err := os.MkdirTemp("", "fluxpack-charts-")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating the directory of pulled charts: %w", err)
	}
	fetcher, err := oci.NewChartFetcher(tmp, as[oci.PullOption](c.registry.options(log))...)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, nil, nil, err
	}
	ctx, cancel := c.registry.context(ctx)
	done = func() {
		cancel()
		_ = os.RemoveAll(tmp)
	}
	c.chartOpts = append(c.chartOpts, charts.WithFetcher(fetcher))
	return ctx, append(opts, lint.WithChartFetcher(fetcher)), done, nil
}

// fetches reports whether lint fetches sources or charts (--sources
// online, --charts online): then what it could not fetch failed for a
// reason worth printing.
func (c *chartFlags) fetches() bool {
	return c.sources == sourcesOnline || slices.Contains(c.dirs, chartsOnline)
}

// readOptions are the options that let a repository's read fetch the
// sources it names, with --sources online (after lintOptions).
func (c *chartFlags) readOptions() []fluxrepo.Option {
	if c.fetcher == nil {
		return nil
	}
	return []fluxrepo.Option{fluxrepo.WithSourceFetcher(c.fetcher)}
}

// newFetcher is --sources online's fetcher, its cache under the user's
// cache directory.
func (c *chartFlags) newFetcher(log *slog.Logger) (*sources.Fetcher, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("--sources %s: no cache directory ($XDG_CACHE_HOME or $HOME): %w", sourcesOnline, err)
	}
	opts := []sources.Option{sources.WithRegistry(c.registry.options(log)...), sources.WithLogger(log)}
	if creds := os.Getenv("FLUXPACK_GIT_CREDS"); creds != "" {
		user, pass, ok := strings.Cut(creds, ":")
		if !ok {
			return nil, fmt.Errorf("$FLUXPACK_GIT_CREDS: want USER:TOKEN")
		}
		opts = append(opts, sources.WithGitCredentials(user, pass))
	}
	if keyFile := os.Getenv("FLUXPACK_GIT_SSH_KEY"); keyFile != "" {
		key, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("$FLUXPACK_GIT_SSH_KEY: %w", err)
		}
		opts = append(opts, sources.WithGitSSHKey(key, os.Getenv("FLUXPACK_GIT_KNOWN_HOSTS")))
	}
	return sources.New(filepath.Join(cache, "fluxpack", "sources"), opts...)
}
