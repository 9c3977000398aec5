package fluxrepo

import (
	"context"
	"slices"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// Lint reads the tree of entry (Read) and lints it as package lint lints a
// stack (lint.Plan): every rule, each finding with the file
// and line of the object and of the Kustomization that applies it,
// relative to the repository's root. The repository's Notes follow the
// layers' findings, before the hints.
func Lint(ctx context.Context, entry string, opts ...Option) (*lint.Report, error) {
	repo, err := Read(ctx, entry, opts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	return repo.Lint(ctx)
}

// Lint lints the tree read, as the package-level Lint does.
func (repo *Repository) Lint(ctx context.Context) (*lint.Report, error) {
	opts := repo.lint
	if repo.rootInferred {
		opts = append(slices.Clone(opts), lint.WithInferredRoot())
	}
	report, err := lint.Plan(ctx, repo.Plan, repo.Inputs, repo.Root, opts...)
	if err != nil {
		return nil, err
	}
	hints := slices.IndexFunc(report.Findings, func(f lint.Finding) bool { return !f.Fails() })
	if hints < 0 {
		hints = len(report.Findings)
	}
	report.Findings = slices.Insert(report.Findings, hints, lint.Group(repo.Notes)...)
	return report, nil
}

// Releases renders the HelmReleases that the layers for which want
// returns true apply (every layer's when want is nil), as lint renders
// them: lint.Releases with the lint options given to Read (WithLint).
func (repo *Repository) Releases(ctx context.Context, want func(layer string) bool, opts ...fluxbuild.ReleaseOption) ([]lint.RenderedRelease, error) {
	return lint.Releases(ctx, repo.Plan, repo.Inputs, repo.Root, want, repo.lint, opts...)
}

// Graph reads the tree of entry and draws its Kustomizations' dependency
// graph (layering.Plan.Graph).
func Graph(ctx context.Context, entry string, format layering.GraphFormat, opts ...Option) ([]byte, error) {
	repo, err := Read(ctx, entry, opts...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	return repo.Plan.Graph(format)
}
