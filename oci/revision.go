package oci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// revisionCommit finds the commit of a Flux revision: <ref>@sha1:<hex>,
// sha1:<hex>, or the same with sha256.
var revisionCommit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|@)sha(?:1|256):([0-9a-f]{40,64})$`) })

// RevisionTag is the tag that names the artifact pushed to tag for a
// source revision, besides tag itself: "<tag>-rev-<commit>" for a revision
// of Git's form (branch@sha1:<commit>), else "<tag>-rev-" and 16 hex
// digits of the revision's sha256. A fleet's clusters, each pushed to its
// own tag, get one such tag per revision, so that promoting a revision
// finds each cluster's own artifact of it. A tag part that would make the
// tag longer than the OCI limit (128) is cut.
func RevisionTag(tag, revision string) string {
	id := ""
	if m := revisionCommit().FindStringSubmatch(revision); m != nil {
		id = m[1]
	} else {
		sum := sha256.Sum256([]byte(revision))
		id = hex.EncodeToString(sum[:8])
	}
	suffix := "-rev-" + id
	if len(tag)+len(suffix) > 128 {
		tag = tag[:128-len(suffix)]
	}
	return tag + suffix
}

// ArtifactRevision returns the revision annotation Push would write for
// the directory dir with opts: WithRevision's, else with WithGitDefaults
// the Git checkout's (WithGitDir's or dir's), else "".
func ArtifactRevision(dir string, opts ...PushOption) (string, error) {
	o, err := collect(nil, opts, func(x PushOption, o *options) error { return x.applyPush(o) })
	if err != nil {
		return "", err
	}
	if o.revision != "" || !o.gitDefaults {
		return o.revision, nil
	}
	if o.gitDir != "" {
		dir = o.gitDir
	}
	return readGit(dir, "").revision, nil
}

// ErrNoArtifact is wrapped by Describe's error when url names no artifact.
var ErrNoArtifact = errors.New("no artifact")

// Describe reads the manifest url names (one request) and returns its
// digest and Flux metadata (created, source, revision). An URL naming
// nothing gives an error wrapping ErrNoArtifact.
//
// Describe is Client.Describe with url parsed, on a Client of its own.
func Describe(ctx context.Context, url string, opts ...ListOption) (*TagInfo, error) {
	ref, err := ParseRef(url)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", redactRef(url), err)
	}
	return new(Client).Describe(ctx, ref, opts...)
}

// Describe reads what r names, as the package-level Describe describes.
func (c *Client) Describe(ctx context.Context, r Ref, opts ...ListOption) (*TagInfo, error) {
	return run(ctx, c, fmt.Sprintf("reading %s", r), opts, ListOption.applyList, nil, func(o *options) (*TagInfo, error) {
		ref := r.at(o).Reference()
		desc, err := remote.Get(ref, o.remoteOptions(ctx)...)
		if isNotFound(err) {
			return nil, ErrNoArtifact
		}
		if err != nil {
			return nil, err
		}
		info := &TagInfo{Digest: desc.Digest.String()}
		if t, ok := ref.(interface{ TagStr() string }); ok {
			info.Tag = t.TagStr()
		}
		if m := manifestOf(desc); m != nil {
			md := fluxoci.MetadataFromAnnotations(m.Annotations)
			info.Created, info.Source, info.Revision = md.Created, md.Source, md.Revision
		}
		return info, nil
	})
}

// revisionTagWritten reports whether the extra tag is the revision tag of
// the artifact existing already holds, pushed with it: then the tag was
// written with the artifact and an unchanged push need not look it up.
func revisionTagWritten(extra string, tag string, existing *remote.Descriptor, o *options) bool {
	if o.revision == "" || extra != RevisionTag(tag, o.revision) {
		return false
	}
	m := manifestOf(existing)
	return m != nil && strings.TrimSpace(m.Annotations[fluxoci.RevisionAnnotation]) == o.revision
}
