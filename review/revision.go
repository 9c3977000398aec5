package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/go-git/go-git/v5"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/lint"
)

// RevisionOption configures CompareRevision beyond Compare's options.
type RevisionOption interface{ applyToRevision(*revisionConfig) error }

type revisionConfig struct {
	root      string
	discovery lint.Discovery
	noDisc    bool
	keep      string // WithKeptRevisions
}

type revisionOption func(*revisionConfig) error

func (f revisionOption) applyToRevision(c *revisionConfig) error { return f(c) }

// WithRoot is the repository's root when it is below the Git repository's
// top (a Flux repository in a monorepo's folder): entry and the changed
// files are read from there, on both sides.
func WithRoot(dir string) RevisionOption {
	return revisionOption(errdefs.NonEmpty("WithRoot", "directory", dir, func(c *revisionConfig) *string { return &c.root }))
}

// WithDiscovery says what CompareRevision looks for in the repository
// besides the lint options given (lint.Discover); by default its
// configuration file and its bootstrap step, as `fluxpack diff` does.
func WithDiscovery(d lint.Discovery) RevisionOption {
	return revisionOption(func(c *revisionConfig) error { c.discovery = d; return nil })
}

// WithoutDiscovery lints both sides with the lint options given only.
func WithoutDiscovery() RevisionOption {
	return revisionOption(func(c *revisionConfig) error { c.noDisc = true; return nil })
}

// WithKeptRevisions keeps the base revisions read from Git in dir
// (ExtractKept), so that the next comparison with the same revision reads
// none again; a revision that cannot be kept there is written to a
// temporary folder, as without the option.
func WithKeptRevisions(dir string) RevisionOption {
	return revisionOption(errdefs.NonEmpty("WithKeptRevisions", "directory", dir, func(c *revisionConfig) *string { return &c.keep }))
}

// CompareRevision says what the working tree of the Git repository holding
// entry (a path, as given on a command line) changes against rev (a
// commit, branch or tag; "" is the default base, DefaultBase): Compare of
// the tree at rev, read from the repository's objects into a temporary
// folder that is removed before it returns (or kept, WithKeptRevisions),
// and the working tree, with what the repository says for lint
// (lint.Discover on the working tree) before opts' lint options, as
// `fluxpack diff ENTRY --base REV` does. Changed-only (no WithAll), a
// change no layer reads is told from Git's objects, and no revision is
// written (Report.Unread). The working tree is read, and lint.Discover
// runs, while Git answers; for a change no layer reads that read is
// cancelled, and CompareRevision returns without waiting for the
// kustomize build under way to end.
func CompareRevision(ctx context.Context, entry, rev string, ropts []RevisionOption, opts ...Option) (*Report, error) {
	rc := &revisionConfig{}
	if err := errdefs.ApplyOptions(rc, ropts, RevisionOption.applyToRevision, "nil RevisionOption"); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("reading the entry point %s: %w", entry, err)
	}
	// One open repository for every Git step: go-git reads its pack
	// indexes and caches objects per repository.
	repo, err := openRepo(abs)
	if err != nil {
		return nil, err
	}
	headRoot := rc.root
	if headRoot == "" {
		if headRoot, err = topOf(repo, abs); err != nil {
			return nil, err
		}
	}
	if headRoot, err = filepath.Abs(headRoot); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(headRoot, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, fmt.Errorf("reading the entry point %s: it is not inside the repository %s", entry, headRoot)
	}
	// The head is read while Git answers what the base is: the first
	// read needs no base (Compare takes it from here).
	pre := &config{}
	if err := errdefs.ApplyOptions(pre, opts, Option.apply, "nil Option"); err != nil {
		return nil, err
	}
	readCtx, cancel := context.WithCancel(ctx)
	head := startHeadRead(readCtx, headRoot, filepath.ToSlash(rel), pre)
	defer head.discard() // unless Compare took it: after cancel, below
	defer cancel()
	// The repository's lint configuration and bootstrap step are read
	// while Git answers too (lint.Discover only reads files); every return
	// waits for that read.
	var disc struct {
		conf, found []lint.Option
		err         error
	}
	var discovering sync.WaitGroup
	if !rc.noDisc {
		discovering.Go(func() { disc.conf, disc.found, disc.err = lint.Discover(headRoot, entry, rc.discovery) })
	}
	defer discovering.Wait()
	var r Revision
	if rev != "" {
		r, err = resolveIn(repo, headRoot, rev)
	} else {
		r, err = defaultBaseIn(repo, headRoot)
	}
	if err != nil {
		return nil, err
	}
	// The names first: the caller's WithNames, if any, wins.
	opts = slices.Concat([]Option{WithNames(r.String(), "working tree")}, opts)
	cfg := &config{}
	if err := errdefs.ApplyOptions(cfg, opts, Option.apply, "nil Option"); err != nil {
		return nil, err
	}
	if !cfg.all {
		// A change no layer reads is told from Git's objects, before any
		// revision is written; Compare takes the files from here.
		files, err := changedSinceIn(repo, headRoot, r)
		if err != nil {
			return nil, err
		}
		opts = append(opts, withChangedFiles(files))
		none, err := unread(headRoot, files)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", cfg.head, err)
		}
		if none {
			// unread says none only of a tree with no ArtifactGenerator
			// nor include: the read lays nothing out, and is not waited
			// for.
			cancel()
			head.abandon()
			return &Report{Base: cfg.base, Head: cfg.head, Entry: filepath.ToSlash(rel), Files: files, Unread: true}, nil
		}
	}
	baseRoot, cleanup, err := baseIn(ctx, repo, headRoot, r, rc.keep)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cleanup() }()
	if !rc.noDisc {
		discovering.Wait()
		conf, found, err := disc.conf, disc.found, disc.err
		if err != nil {
			return nil, err
		}
		// The repository's configuration before the caller's lint
		// options, the bootstrap step after them, as lint.Tree orders them.
		opts = slices.Concat([]Option{WithLintOptions(conf...)}, opts, []Option{WithLintOptions(found...)})
	}
	return Compare(ctx, baseRoot, headRoot, filepath.ToSlash(rel), append(opts, withHeadRead(head))...)
}

// Base writes rev's tree to compare the working tree at headRoot with:
// kept in keep (ExtractKept) when given and it can be, else into a
// temporary folder cleanup removes. root is headRoot's place in it:
// Extract writes the Git repository's top, and headRoot may be below it.
func Base(ctx context.Context, headRoot string, rev Revision, keep string) (root string, cleanup func() error, err error) {
	repo, err := openRepo(headRoot)
	if err != nil {
		return "", nil, err
	}
	return baseIn(ctx, repo, headRoot, rev, keep)
}

// baseIn is Base from an open repository, the one holding headRoot.
func baseIn(ctx context.Context, repo *git.Repository, headRoot string, rev Revision, keep string) (root string, cleanup func() error, err error) {
	top, cleanup := "", func() error { return nil }
	if keep != "" {
		top, err = extractKeptIn(ctx, repo, headRoot, rev, keep)
	}
	if keep == "" || err != nil { // not kept: a temporary folder
		if top, cleanup, err = extractIn(ctx, repo, rev, ""); err != nil {
			return "", nil, err
		}
	}
	root = top
	if gitTop, err := topOf(repo, headRoot); err == nil {
		if sub, err := filepath.Rel(gitTop, headRoot); err == nil && sub != "." {
			root = filepath.Join(top, sub)
		}
	}
	return root, cleanup, nil
}
