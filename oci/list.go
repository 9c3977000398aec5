package oci

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/fluxcd/pkg/version"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"
)

// ErrNoRepository is wrapped by List's error when the registry has no
// repository of that name (NAME_UNKNOWN, or 404 for its tag list).
var ErrNoRepository = errors.New("repository not found")

// TagInfo describes one tag of a repository.
type TagInfo struct {
	Tag      string `json:"tag"`
	Digest   string `json:"digest"`
	Created  string `json:"created,omitempty"`
	Source   string `json:"source,omitempty"`
	Revision string `json:"revision,omitempty"`
}

// List returns the tags of the repository at url (oci://host/repository) with
// what each points at. Cosign's signature, attestation and SBOM tags are left
// out, as by `flux list artifacts`, and so are the sha256-<hex> tags of the
// OCI referrers tag schema, where registries without the referrers API keep
// the notation signatures and sigstore bundles of an artifact. Tags come newest version first with
// WithSemver (which keeps only versions in its range), else in reverse
// lexical order as Flux lists them. A repository the registry does not
// have is an error wrapping ErrNoRepository.
//
// List is Client.List with url parsed, on a Client of its own.
func List(ctx context.Context, url string, opts ...ListOption) ([]TagInfo, error) {
	if _, err := cutScheme(url, "REPOSITORY"); err != nil {
		return nil, fmt.Errorf("listing %s: %w", redactRef(url), err)
	}
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", redactRef(url), err)
	}
	return new(Client).List(ctx, ref, opts...)
}

// List returns the tags of ref's repository, as the package-level List
// describes. ref names a repository: a tag or digest is refused.
func (c *Client) List(ctx context.Context, ref Ref, opts ...ListOption) ([]TagInfo, error) {
	check := func(*options) error {
		if ref.tag != "" || ref.digest != "" {
			return fmt.Errorf("parsing repository %q: want oci://HOST/REPOSITORY, without tag or digest", ref.String())
		}
		return nil
	}
	return run(ctx, c, fmt.Sprintf("listing %s", ref), opts, ListOption.applyList, check,
		func(o *options) ([]TagInfo, error) { return list(ctx, ref.at(o).repo, o) })
}

func list(ctx context.Context, repo name.Repository, o *options) ([]TagInfo, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	ro := o.remoteOptions(gctx)
	tags, err := remote.List(repo, ro...)
	if isNotFound(err) {
		return nil, ErrNoRepository
	}
	if err != nil {
		return nil, err
	}
	var constraint *semver.Constraints
	if o.semver != "" {
		constraint, _ = parseSemver(o.semver) // checked by WithSemver
	}
	versions := map[string]*semver.Version{}
	var kept []string
	for _, t := range tags {
		if fluxoci.IsCosignArtifact(t) || isReferrersTag(t) {
			continue
		}
		if constraint != nil {
			v, err := version.ParseVersion(t)
			if err != nil || !constraint.Check(v) {
				continue
			}
			versions[t] = v
		}
		kept = append(kept, t)
	}
	if constraint != nil {
		sort.SliceStable(kept, func(i, j int) bool { return versions[kept[i]].GreaterThan(versions[kept[j]]) })
	} else {
		slices.SortFunc(kept, func(a, b string) int { return strings.Compare(b, a) })
	}

	infos := make([]TagInfo, len(kept))
	for i, t := range kept {
		g.Go(func() error {
			tag := repo.Tag(t)
			desc, err := remote.Get(tag, ro...)
			if err != nil {
				return fmt.Errorf("reading %s: %w", URL(tag), err)
			}
			info := TagInfo{Tag: t, Digest: desc.Digest.String()}
			if m := manifestOf(desc); m != nil {
				md := fluxoci.MetadataFromAnnotations(m.Annotations)
				info.Created, info.Source, info.Revision = md.Created, md.Source, md.Revision
			}
			infos[i] = info
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return infos, nil
}

func parseSemver(s string) (*semver.Constraints, error) {
	c, err := semver.NewConstraint(s)
	if err != nil {
		return nil, fmt.Errorf("parsing semver range %q: %w", s, err)
	}
	return c, nil
}

// isReferrersTag reports whether t is a tag of the referrers tag schema:
// sha256- and the hex digest whose referrers it lists.
func isReferrersTag(t string) bool {
	h, ok := strings.CutPrefix(t, "sha256-")
	if !ok {
		return false
	}
	_, err := v1.NewHash("sha256:" + h)
	return err == nil
}
