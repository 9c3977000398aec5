package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
)

// The media types of a Helm chart in an OCI registry, as helm push writes
// it and source-controller reads it.
const (
	ChartConfigMediaType  = types.MediaType("application/vnd.cncf.helm.config.v1+json")
	ChartContentMediaType = types.MediaType("application/vnd.cncf.helm.chart.content.v1.tar+gzip")
)

// MaxChartSize bounds the packaged chart PullChart downloads.
const MaxChartSize = MaxPullSize

// ErrNotChart is wrapped by the error about an artifact that holds no Helm
// chart (no layer of ChartContentMediaType).
var ErrNotChart = errors.New("not a Helm chart")

// PullChart downloads the Helm chart at url (oci://host/repo:tag, as helm
// push wrote it) into dir, created if need be, as the packaged chart
// dir/<name>-<tag>.tgz, <name> being the last element of the repository,
// and returns its path. The file is written beside and renamed into place,
// and only once its digest is the one the manifest names.
//
// PullChart is Client.PullChart with url parsed, on a Client of its own.
func PullChart(ctx context.Context, url, dir string, opts ...PullOption) (string, error) {
	ref, err := ParseRef(url)
	if err != nil {
		return "", fmt.Errorf("pulling chart %s: %w", redactRef(url), err)
	}
	return new(Client).PullChart(ctx, ref, dir, opts...)
}

// PullChart downloads the Helm chart at ref into dir, as the package-level
// PullChart describes.
func (c *Client) PullChart(ctx context.Context, ref Ref, dir string, opts ...PullOption) (string, error) {
	o, err := collect(c, opts, func(x PullOption, o *options) error { return x.applyPull(o) })
	if err != nil {
		return "", fmt.Errorf("pulling chart %s: %w", ref, err)
	}
	return pullChart(ctx, ref, dir, o)
}

func pullChart(ctx context.Context, r Ref, dir string, o *options) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("pulling chart %s: no directory to write into", r)
	}
	p, err := guard(ctx, func() (string, error) { return fetchChart(ctx, r.at(o).Reference(), dir, o) })
	if err != nil {
		return "", fmt.Errorf("pulling chart %s: %w", r, err)
	}
	return p, nil
}

func fetchChart(ctx context.Context, ref name.Reference, dir string, o *options) (string, error) {
	ro := o.remoteOptions(ctx)
	desc, err := remote.Get(ref, ro...)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", URL(ref), err)
	}
	layer := chartLayer(desc)
	if layer == nil {
		return "", fmt.Errorf("%s: %w (no layer %s)", URL(ref), ErrNotChart, ChartContentMediaType)
	}
	if layer.Size > MaxChartSize {
		return "", fmt.Errorf("chart of %s: %w: %d bytes, over %d", URL(ref), ErrTooBig, layer.Size, int64(MaxChartSize))
	}
	blob, err := remote.Layer(ref.Context().Digest(layer.Digest.String()), ro...)
	if err != nil {
		return "", fmt.Errorf("reading chart of %s: %w", URL(ref), err)
	}
	rc, err := blob.Compressed() // verifies the digest as it reads to the end
	if err != nil {
		return "", fmt.Errorf("reading chart of %s: %w", URL(ref), err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxChartSize+1))
	if err != nil {
		return "", fmt.Errorf("reading chart of %s: %w", URL(ref), err)
	}
	if int64(len(data)) > MaxChartSize {
		return "", fmt.Errorf("chart of %s: %w: over %d bytes", URL(ref), ErrTooBig, int64(MaxChartSize))
	}
	if err := ctx.Err(); err != nil { // the caller gave up meanwhile
		return "", err
	}
	id := strings.ReplaceAll(ref.Identifier(), ":", "-") // a tag, or sha256-… for a digest
	p := filepath.Join(dir, path.Base(ref.Context().RepositoryStr())+"-"+id+".tgz")
	if err := atomicfile.WriteFile(p, data, 0o644); err != nil {
		return "", &FileError{Path: p, Err: err}
	}
	return p, nil
}

// chartLayer returns the chart layer of desc's manifest, or nil when desc
// is not a Helm chart.
func chartLayer(desc *remote.Descriptor) *v1.Descriptor {
	m := manifestOf(desc)
	if m == nil {
		return nil
	}
	for _, l := range m.Layers {
		if l.MediaType == ChartContentMediaType {
			return &l
		}
	}
	return nil
}

// ChartFetcher pulls Helm charts from OCI registries into one directory,
// each chart once: it is the fetcher of layering.WithChartFetcher, for lint
// to render charts that no local folder holds.
type ChartFetcher struct {
	dir  string
	opts *options

	mu      sync.Mutex
	fetched map[string]string // url:tag → path
}

// NewChartFetcher returns a ChartFetcher that writes into dir with the
// options of PullChart.
func NewChartFetcher(dir string, opts ...PullOption) (*ChartFetcher, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: chart fetcher: no directory to write into", ErrInvalidOption)
	}
	o, err := collect(new(Client), opts, func(x PullOption, o *options) error { return x.applyPull(o) })
	if err != nil {
		return nil, fmt.Errorf("chart fetcher: %w", err)
	}
	return &ChartFetcher{dir: dir, opts: o, fetched: map[string]string{}}, nil
}

// FetchChart pulls the chart at url (oci://host/repo) and tag, as PullChart
// does, and returns the path of the packaged chart. A chart already pulled
// is not pulled again.
func (f *ChartFetcher) FetchChart(ctx context.Context, url, tag string) (string, error) {
	ref := url
	if tag != "" {
		ref += ":" + tag
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.fetched[ref]; ok {
		return p, nil
	}
	r, err := ParseRef(ref)
	if err != nil {
		return "", fmt.Errorf("pulling chart %s: %w", redactRef(ref), err)
	}
	p, err := pullChart(ctx, r, f.dir, f.opts)
	if err != nil {
		return "", err
	}
	f.fetched[ref] = p
	return p, nil
}
