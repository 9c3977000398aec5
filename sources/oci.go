package sources

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/fluxpack/fluxpack/oci"
)

// OCIRepository fetches the files of o's artifact at the digest its
// spec.ref resolves to, with source-controller's precedence (digest,
// semver with semverFilter, tag; latest without spec.ref), extracting the
// layer spec.layerSelector names (the first layer without it), and
// returns them with the revision source-controller records
// ("v1.2.0@sha256:<digest>", "sha256:<digest>" for a digest alone). The
// files are kept by manifest digest.
func (f *Fetcher) OCIRepository(ctx context.Context, o *sourcev1.OCIRepository) (Artifact, error) {
	obj := "OCIRepository/" + o.Namespace + "/" + o.Name
	if !strings.HasPrefix(o.Spec.URL, "oci://") {
		return Artifact{}, fmt.Errorf("%s: spec.url %q: want oci://HOST/REPOSITORY", obj, o.Spec.URL)
	}
	mediaType := ""
	if ls := o.Spec.LayerSelector; ls != nil {
		if ls.Operation == sourcev1.OCILayerCopy {
			return Artifact{}, fmt.Errorf("%s: spec.layerSelector.operation copy keeps the layer packed: there are no files to read", obj)
		}
		mediaType = ls.MediaType
	}
	ref := o.Spec.Reference
	if ref == nil {
		ref = &sourcev1.OCIRepositoryRef{}
	}
	key := "oci " + o.Spec.URL + " " + fmt.Sprint(*ref) + " " + mediaType
	a, err := f.once(key, func() (Artifact, error) { return f.oci(ctx, obj, o.Spec.URL, ref, mediaType) })
	if err != nil {
		return Artifact{}, fmt.Errorf("fetching %s (%s): %w", obj, oci.RedactURL(o.Spec.URL), err)
	}
	return a, nil
}

func (f *Fetcher) oci(ctx context.Context, obj, url string, ref *sourcev1.OCIRepositoryRef, mediaType string) (Artifact, error) {
	digest, tag, err := f.resolveOCI(ctx, obj, url, ref.Digest, ref.SemVer, ref.SemverFilter, ref.Tag)
	if err != nil {
		return Artifact{}, err
	}
	revision := digest
	if tag != "" {
		revision = tag + "@" + digest
	}
	dir := f.cachePath("oci", strings.ReplaceAll(digest, ":", "-")+layerKey(mediaType))
	if cached(dir) {
		f.log.Info("source cached", "source", obj, "revision", revision)
		return Artifact{Dir: dir, Revision: revision}, nil
	}
	opts := []oci.PullOption{oci.WithLayerSelector(mediaType)}
	for _, o := range f.registry {
		opts = append(opts, o)
	}
	if _, err := oci.Pull(ctx, url+"@"+digest, dir, opts...); err != nil {
		if errors.Is(err, oci.ErrNoLayer) {
			return Artifact{}, &NotFoundError{Object: obj, Msg: err.Error()}
		}
		return Artifact{}, err
	}
	if err := writeMeta(dir, meta{Revision: digest}); err != nil {
		return Artifact{}, err
	}
	f.log.Info("source fetched", "source", obj, "revision", revision)
	return Artifact{Dir: dir, Revision: revision}, nil
}

// layerKey tells apart the extractions of two layers of one manifest.
func layerKey(mediaType string) string {
	if mediaType == "" {
		return ""
	}
	return "-" + hashOf(mediaType)[:12]
}

// resolveOCI is the manifest digest (and tag, when one was resolved) an
// OCIRepository's reference names, with source-controller's precedence.
func (f *Fetcher) resolveOCI(ctx context.Context, obj, url, digest, semverRange, filter, tag string) (string, string, error) {
	if digest != "" {
		return digest, "", nil
	}
	var list []oci.ListOption
	for _, o := range f.registry {
		list = append(list, o)
	}
	if semverRange != "" {
		var re *regexp.Regexp
		if filter != "" {
			var err error
			if re, err = regexp.Compile(filter); err != nil {
				return "", "", &NotFoundError{Object: obj, Msg: fmt.Sprintf("semverFilter %q: %v", filter, err)}
			}
		}
		if _, err := semver.NewConstraint(semverRange); err != nil {
			return "", "", &NotFoundError{Object: obj, Msg: fmt.Sprintf("semver parse error: %v", err)}
		}
		tags, err := oci.List(ctx, url, append(list, oci.WithSemver(semverRange))...)
		if err != nil {
			return "", "", err
		}
		for _, t := range tags { // newest version first
			if re == nil || re.MatchString(t.Tag) {
				return t.Digest, t.Tag, nil
			}
		}
		return "", "", &NotFoundError{Object: obj, Msg: fmt.Sprintf("no match found for semver: %s", semverRange)}
	}
	if tag == "" {
		tag = "latest"
	}
	info, err := oci.Describe(ctx, url+":"+tag, list...)
	if errors.Is(err, oci.ErrNoArtifact) {
		return "", "", &NotFoundError{Object: obj, Msg: fmt.Sprintf("tag %q not found", tag)}
	}
	if err != nil {
		return "", "", err
	}
	return info.Digest, tag, nil
}
