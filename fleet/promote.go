package fleet

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/fluxpack/fluxpack/oci"
)

// ErrNoRevision is wrapped by Promote's error when the cluster promoted
// from has no revision recorded, or the cluster promoted to has no
// artifact of that revision.
var ErrNoRevision = errors.New("no artifact of the revision")

// ErrCheckout is wrapped by Promote's error when PromoteOptions.Render
// would render a revision the local checkout is not at.
var ErrCheckout = errors.New("the checkout is not at the revision")

// PromoteOptions are the registry options of Promote: Read for the
// manifests it reads (credentials, TLS), Promote for the tag it moves
// (the same, and the keys the artifact must verify with).
type PromoteOptions struct {
	Read    []oci.ListOption
	Promote []oci.PromoteOption
	// Render makes the artifact the cluster has not: when it has none of
	// the revision, Promote renders the cluster as Push does, pushes it to
	// the revision's tag, then moves the cluster's tag there. The stack's
	// files are the local checkout's, so the checkout must be at that
	// revision: HEAD at its commit, and no file Git tracks in the stack's
	// folder changed. Otherwise Promote refuses (ErrCheckout), naming the
	// revision, and pushes and moves nothing.
	Render bool
	// Push are the options of Render's push, as Push takes them
	// (WithPushOptions: registry, retries; WithTreeOptions; WithLogger).
	Push []Option
	// RequireReady, when set, is asked before anything is pushed or
	// moved whether the cluster promoted from runs the artifact its tag
	// holds: it gets that artifact's URL (the fleet's, oci://host/repository:tag)
	// and digest, and returns nil when every layer of that cluster applied
	// it and is Ready (package status's Watcher.Require with
	// WithArtifact). Any error refuses the promotion: Promote returns it
	// wrapped, having moved nothing. So only a revision the cluster
	// promoted from runs, healthy, reaches the next.
	RequireReady func(ctx context.Context, url, digest string) error
}

// Promote points cluster's tag at cluster's own artifact of the source
// revision that cluster from's artifact holds: promotion by revision, not
// by artifact, since each cluster's artifact carries its own render (its
// OCIRepository, its variables) and must never be handed to another
// cluster. Push tags every cluster's artifact with its revision
// (oci.RevisionTag); when cluster has no artifact of that revision,
// Promote says so (ErrNoRevision) and moves nothing, or with
// PromoteOptions.Render makes it from the checkout first. With
// PromoteOptions.RequireReady, it first asks whether cluster from runs its
// artifact, Ready, and moves nothing when not.
func Promote(ctx context.Context, f *Fleet, cluster, from string, opts PromoteOptions) (*oci.Result, error) {
	to, err := f.Artifact(cluster)
	if err != nil {
		return nil, err
	}
	src, err := f.Artifact(from)
	if err != nil {
		return nil, err
	}
	info, err := oci.Describe(ctx, src, opts.Read...)
	if err != nil {
		return nil, fmt.Errorf("promoting cluster %q from %q: %w", cluster, from, err)
	}
	if info.Revision == "" {
		return nil, fmt.Errorf("promoting cluster %q from %q: %s records no source revision (push the fleet from a Git checkout, or with WithRevision): %w", cluster, from, oci.RedactURL(src), ErrNoRevision)
	}
	if opts.RequireReady != nil {
		if err := opts.RequireReady(ctx, src, info.Digest); err != nil {
			return nil, fmt.Errorf("promoting cluster %q from %q: cluster %q does not run %s@%s (revision %s) Ready, nothing moved: %w",
				cluster, from, from, oci.RedactURL(src), info.Digest, info.Revision, err)
		}
	}
	tag, ok := urlTag(to)
	if !ok {
		return nil, fmt.Errorf("promoting cluster %q: %s: want a tag", cluster, oci.RedactURL(to))
	}
	own := to[:len(to)-len(tag)] + oci.RevisionTag(tag, info.Revision)
	if _, err := oci.Describe(ctx, own, opts.Read...); err != nil {
		if !errors.Is(err, oci.ErrNoArtifact) {
			return nil, fmt.Errorf("promoting cluster %q from %q: %w", cluster, from, err)
		}
		missing := fmt.Sprintf("cluster %q has no artifact of revision %s, which %q runs (no %s)", cluster, info.Revision, from, oci.RedactURL(own))
		if !opts.Render {
			return nil, fmt.Errorf("promoting cluster %q from %q: %s: push the fleet at that revision first, or promote with PromoteOptions.Render; nothing moved: %w",
				cluster, from, missing, ErrNoRevision)
		}
		if err := renderRevision(ctx, f, cluster, own, info.Revision, opts.Push); err != nil {
			return nil, fmt.Errorf("promoting cluster %q from %q: %s, and it cannot be rendered: %w", cluster, from, missing, err)
		}
	}
	return oci.Promote(ctx, own, to, opts.Promote...)
}

// renderRevision renders cluster from the fleet's checkout and pushes it
// to url, once the checkout is known to be at revision.
func renderRevision(ctx context.Context, f *Fleet, cluster, url, revision string, opts []Option) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	sh, err := newShipper(f, cfg)
	if err != nil {
		return err
	}
	head, err := oci.ArtifactRevision(sh.stackDir, oci.WithGitDefaults(), oci.WithGitDir(sh.stackDir))
	if err != nil {
		return err
	}
	// The revision tag names the commit (RevisionTag): the checkout is at
	// the revision when both give the same tag, whatever branch each says.
	switch {
	case head == "":
		return fmt.Errorf("the stack's folder %s is not in a Git checkout, so revision %s cannot be read from it; nothing moved: %w", sh.stackDir, revision, ErrCheckout)
	case oci.RevisionTag("t", head) != oci.RevisionTag("t", revision):
		return fmt.Errorf("the checkout of %s is at %s, not at revision %s: check that revision out and promote again; nothing moved: %w", sh.stackDir, head, revision, ErrCheckout)
	}
	changed, err := changedFiles(ctx, sh.stackDir)
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		if len(changed) > 5 {
			changed = append(changed[:5], fmt.Sprintf("and %d more", len(changed)-5))
		}
		return fmt.Errorf("the checkout of %s has changes to files of revision %s (%s): commit or stash them and promote again; nothing moved: %w", sh.stackDir, revision, strings.Join(changed, ", "), ErrCheckout)
	}
	res, err := sh.push(ctx, cluster, url, revision)
	if err != nil {
		return err
	}
	cfg.logger.Info("rendered and pushed the cluster's artifact of the revision", "cluster", cluster, "revision", revision, "url", oci.RedactURL(url), "digest", res.Digest)
	return nil
}

// changedFiles lists the files Git tracks under dir that differ from
// HEAD, staged or not, as git status names them.
func changedFiles(ctx context.Context, dir string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no", "--", ".").Output()
	if err != nil {
		return nil, fmt.Errorf("reading the changes of the checkout of %s: %w", dir, err)
	}
	var files []string
	for line := range strings.Lines(string(out)) {
		if len(line) > 3 {
			files = append(files, strings.TrimSpace(line[3:]))
		}
	}
	return files, nil
}
