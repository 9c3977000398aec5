package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/fluxcd/pkg/version"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/oci"
)

// MaxIndexSize and MaxChartSize bound what is read of a Helm repository's
// index and of a chart, as source-controller's defaults do.
const (
	MaxIndexSize = 50 << 20
	MaxChartSize = 10 << 20
)

// ResolveChart finds chart in the Helm repository at repoURL (an HTTP(S)
// repository with an index.yaml, or oci://HOST/PATH) at ver — an exact
// version, a semver range, or "" or "*" for the latest stable version —
// as source-controller selects it (an exact match first, then the highest
// version in the range, the newest of equal ones), fetches it, and returns
// the path of its packaged file. For an OCI repository chart may be ""
// when repoURL is the chart's own repository (an OCIRepository's URL),
// and ver may be a manifest digest (sha256:…).
func (f *Fetcher) ResolveChart(ctx context.Context, repoURL, chart, ver string) (string, error) {
	a, err := f.Chart(ctx, repoURL, chart, ver)
	return a.Path, err
}

// Chart is ResolveChart returning the chart's version as the Artifact's
// Revision.
func (f *Fetcher) Chart(ctx context.Context, repoURL, chart, ver string) (Artifact, error) {
	what := redactURL(repoURL)
	if chart != "" {
		what = chart + " of " + what
	}
	if ver != "" {
		what += " at " + ver
	}
	key := "chart " + repoURL + " " + chart + " " + ver
	a, err := f.once(key, func() (Artifact, error) {
		if strings.HasPrefix(repoURL, "oci://") {
			return f.ociChart(ctx, repoURL, chart, ver)
		}
		return f.httpChart(ctx, repoURL, chart, ver)
	})
	if err != nil {
		return Artifact{}, fmt.Errorf("fetching chart %s: %w", what, err)
	}
	return a, nil
}

// FetchChart fetches the chart at url (oci://HOST/REPOSITORY) and tag, as
// lint's ChartFetcher: kept by manifest digest.
func (f *Fetcher) FetchChart(ctx context.Context, url, tag string) (string, error) {
	return f.ResolveChart(ctx, url, "", tag)
}

func (f *Fetcher) ociChart(ctx context.Context, repoURL, chart, ver string) (Artifact, error) {
	url := strings.TrimSuffix(repoURL, "/")
	if chart != "" {
		url += "/" + chart
	}
	var list []oci.ListOption
	for _, o := range f.registry {
		list = append(list, o)
	}
	tag, digest := "", ""
	if strings.HasPrefix(ver, "sha256:") { // an OCIRepository's spec.ref.digest
		digest = ver
	} else if ver != "" && ver != "*" {
		if _, err := version.ParseVersion(ver); err == nil && !strings.ContainsAny(ver, "<>=~^*|, ") {
			tag = strings.ReplaceAll(ver, "+", "_") // as helm push tags it
		}
	}
	switch {
	case digest != "":
	case tag == "":
		rng := ver
		if rng == "" {
			rng = "*"
		}
		if _, err := semver.NewConstraint(rng); err != nil {
			return Artifact{}, &NotFoundError{Object: url, Msg: fmt.Sprintf("invalid version range %q: %v", ver, err)}
		}
		tags, err := oci.List(ctx, url, append(list, oci.WithSemver(rng))...)
		if err != nil {
			return Artifact{}, err
		}
		if len(tags) == 0 {
			return Artifact{}, &NotFoundError{Object: url, Msg: fmt.Sprintf("no '%s' chart with version matching '%s' found", path.Base(url), ver)}
		}
		tag, digest = tags[0].Tag, tags[0].Digest
	default:
		info, err := oci.Describe(ctx, url+":"+tag, list...)
		if errors.Is(err, oci.ErrNoArtifact) {
			return Artifact{}, &NotFoundError{Object: url, Msg: fmt.Sprintf("no '%s' chart with version '%s' found", path.Base(url), ver)}
		}
		if err != nil {
			return Artifact{}, err
		}
		digest = info.Digest
	}
	v := strings.ReplaceAll(tag, "_", "+")
	if tag == "" {
		v = digest
	}
	dir := f.cachePath("charts", strings.ReplaceAll(digest, ":", "-"))
	if cached(dir) {
		if p, err := onlyTgz(dir); err == nil {
			return Artifact{Path: p, Revision: v}, nil
		}
	}
	tmp, commit, abort, err := stage(dir)
	if err != nil {
		return Artifact{}, err
	}
	var pull []oci.PullOption
	for _, o := range f.registry {
		pull = append(pull, o)
	}
	if _, err := oci.PullChart(ctx, url+"@"+digest, tmp, pull...); err != nil {
		abort()
		return Artifact{}, err
	}
	if err := commit(); err != nil {
		abort()
		return Artifact{}, err
	}
	if err := writeMeta(dir, meta{Revision: v}); err != nil {
		return Artifact{}, err
	}
	p, err := onlyTgz(dir)
	if err != nil {
		return Artifact{}, err
	}
	f.log.Info("chart fetched", "chart", url, "version", v, "digest", digest)
	return Artifact{Path: p, Revision: v}, nil
}

// onlyTgz is the packaged chart of a cache directory.
func onlyTgz(dir string) (string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if err != nil || len(m) != 1 {
		return "", fmt.Errorf("%s: not one chart", dir)
	}
	return m[0], nil
}

// index is what an index.yaml says of its charts.
type index struct {
	Entries map[string][]*indexEntry `json:"entries"`
}

type indexEntry struct {
	Version string    `json:"version"`
	URLs    []string  `json:"urls"`
	Digest  string    `json:"digest"`
	Created time.Time `json:"created"`
}

func (f *Fetcher) httpChart(ctx context.Context, repoURL, chart, ver string) (Artifact, error) {
	u, err := neturl.Parse(repoURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return Artifact{}, fmt.Errorf("repository URL %q: want http(s):// or oci://", redactURL(repoURL))
	}
	idxURL := *u
	idxURL.Path = path.Join(u.Path, "index.yaml")
	idxURL.RawPath = ""
	b, err := f.get(ctx, idxURL.String(), MaxIndexSize)
	if err != nil {
		return Artifact{}, fmt.Errorf("reading index: %w", err)
	}
	var idx index
	if err := sigyaml.Unmarshal(b, &idx); err != nil {
		return Artifact{}, fmt.Errorf("reading index of %s: %w", redactURL(repoURL), err)
	}
	e, err := selectVersion(idx.Entries[chart], chart, ver)
	if err != nil {
		return Artifact{}, &NotFoundError{Object: redactURL(repoURL), Msg: err.Error()}
	}
	if len(e.URLs) == 0 {
		return Artifact{}, &NotFoundError{Object: redactURL(repoURL), Msg: fmt.Sprintf("chart '%s' has no downloadable URLs", chart)}
	}
	digest := strings.TrimPrefix(strings.ToLower(e.Digest), "sha256:")
	if len(digest) == 64 {
		dir := f.cachePath("charts", "sha256-"+digest)
		if p, err := onlyTgz(dir); err == nil {
			return Artifact{Path: p, Revision: e.Version}, nil
		}
	}
	ref, err := neturl.Parse(e.URLs[0])
	if err != nil {
		return Artifact{}, fmt.Errorf("chart URL %q: %w", e.URLs[0], err)
	}
	base := *u
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	data, err := f.get(ctx, base.ResolveReference(ref).String(), MaxChartSize)
	if err != nil {
		return Artifact{}, fmt.Errorf("downloading %s %s: %w", chart, e.Version, err)
	}
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	if len(digest) == 64 && got != digest {
		return Artifact{}, fmt.Errorf("chart %s %s: digest sha256:%s, the index says sha256:%s", chart, e.Version, got, digest)
	}
	dir := f.cachePath("charts", "sha256-"+got)
	tmp, commit, abort, err := stage(dir)
	if err != nil {
		return Artifact{}, err
	}
	if err := os.WriteFile(filepath.Join(tmp, chart+"-"+e.Version+".tgz"), data, 0o644); err != nil {
		abort()
		return Artifact{}, err
	}
	if err := commit(); err != nil {
		abort()
		return Artifact{}, err
	}
	_ = writeMeta(dir, meta{Revision: e.Version})
	f.log.Info("chart fetched", "chart", chart, "version", e.Version, "repository", redactURL(repoURL))
	p, err := onlyTgz(dir)
	return Artifact{Path: p, Revision: e.Version}, err
}

// selectVersion picks the entry of ver among a chart's entries as
// source-controller does: an exact match of the version string, else the
// highest version within the range ("" and "*" the latest stable), the
// most recently created of equal versions.
func selectVersion(entries []*indexEntry, chart, ver string) (*indexEntry, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("no chart name found: %s", chart)
	}
	if ver != "" {
		for _, e := range entries {
			if e.Version == ver {
				return e, nil
			}
		}
	}
	rng := ver
	if rng == "" {
		rng = "*"
	}
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return nil, fmt.Errorf("invalid version range %q: %w", ver, err)
	}
	type match struct {
		v *semver.Version
		e *indexEntry
	}
	var ms []match
	for _, e := range entries {
		v, err := version.ParseVersion(e.Version)
		if err != nil || !c.Check(v) {
			continue
		}
		ms = append(ms, match{v, e})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("no '%s' chart with version matching '%s' found", chart, ver)
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if !ms[i].v.Equal(ms[j].v) {
			return ms[i].v.GreaterThan(ms[j].v)
		}
		return ms[i].e.Created.After(ms[j].e.Created)
	})
	return ms[0].e, nil
}

// get reads url, at most limit bytes.
func (f *Fetcher) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", redactURL(url), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: over %d bytes", redactURL(url), limit)
	}
	return b, nil
}
