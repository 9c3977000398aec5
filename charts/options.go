package charts

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// ErrInvalidOption is wrapped by the error of an option that is not valid.
var ErrInvalidOption = errdefs.ErrInvalidOption

// ErrUnavailable is wrapped by the error of a chart that is in no source
// read offline, no WithDirs folder, and cannot be fetched: what is inside
// it is unknown, which is no problem by itself.
var ErrUnavailable = errors.New("chart not available offline")

// Fetcher fetches a chart from an OCI registry, for a chart in none of the
// WithDirs folders. url is the chart's oci://host/repo (without tag), tag
// its version as the registry tags it; path is a local packaged chart
// (.tgz). Package oci's ChartFetcher is one.
type Fetcher interface {
	FetchChart(ctx context.Context, url, tag string) (path string, err error)
}

// Resolver is what a WithFetcher fetcher also implements when it reads
// HTTP Helm repositories and resolves version ranges as source-controller
// does (package sources' Fetcher): the chart of a HelmRepository at
// repoURL (http(s):// or oci://) at an exact version, a range, or "" for
// the latest stable; for an OCIRepository's chart, repoURL is its URL and
// chart is "". An error with a method NotFound() bool returning true says
// the repository has no such chart or version: helm-controller fails the
// same way.
type Resolver interface {
	ResolveChart(ctx context.Context, repoURL, chart, version string) (path string, err error)
}

// Option configures a Finder. Only this package implements it.
type Option interface{ applyToFinder(*Finder) error }

type funcOption func(*Finder) error

func (f funcOption) applyToFinder(c *Finder) error { return f(c) }

// WithDirs names folders holding charts: a chart folder <name>/ (with its
// Chart.yaml) or a packaged <name>-<version>.tgz, found by the chart's
// name (the HelmRelease's spec.chart.spec.chart, or the last element of
// the URL of the OCIRepository its spec.chartRef names). A chart in a
// source a layer reads needs no folder.
func WithDirs(dirs ...string) Option {
	return funcOption(func(c *Finder) error {
		for _, d := range dirs {
			fi, err := os.Stat(d)
			if err != nil {
				return errdefs.Kind(ErrInvalidOption, "charts folder %s: %v", d, err)
			}
			if !fi.IsDir() {
				return errdefs.Kind(ErrInvalidOption, "charts folder %s: not a directory", d)
			}
		}
		c.dirs = append(c.dirs, dirs...)
		return nil
	})
}

// WithFetcher fetches with f the OCI charts that are in none of the
// WithDirs folders: the chart of an OCIRepository that a HelmRelease's
// spec.chartRef names (spec.url at spec.ref.tag), and a chart of a
// HelmRepository of spec.type oci (spec.url/CHART at the version); with a
// Resolver, HTTP Helm repositories and version ranges too. A chart f
// cannot fetch is ErrUnavailable. Without it, no chart is fetched.
func WithFetcher(f Fetcher) Option {
	return funcOption(func(c *Finder) error {
		if f == nil {
			return errdefs.Kind(ErrInvalidOption, "chart fetcher: nil")
		}
		c.fetcher = f
		return nil
	})
}

// Finder finds charts as the options say. The zero Finder finds charts in
// the sources layers read only.
type Finder struct {
	dirs    []string
	fetcher Fetcher
}

// New returns a Finder with the options, or the error of the first that
// is not valid.
func New(opts ...Option) (*Finder, error) {
	f := &Finder{}
	if err := errdefs.ApplyOptions(f, opts, Option.applyToFinder, "nil charts.Option"); err != nil {
		return nil, err
	}
	return f, nil
}

// Dirs are the WithDirs folders.
func (f *Finder) Dirs() []string {
	if f == nil {
		return nil
	}
	return slices.Clone(f.dirs)
}

// Fetches reports whether the Finder fetches charts (WithFetcher).
func (f *Finder) Fetches() bool { return f != nil && f.fetcher != nil }
