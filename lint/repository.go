package lint

import (
	"context"
	"slices"

	"github.com/fluxpack/fluxpack/fluxrepo"
)

// Tree reads the tree of entry (fluxrepo.Read with read) and lints it
// (Repository) as `fluxpack lint ENTRY` does: with what the repository
// says besides opts (Discover: its configuration file, its bootstrap
// step), unless WithoutDiscovery; WithDiscovery says what to look for.
func Tree(ctx context.Context, entry string, read []fluxrepo.Option, opts ...Option) (*Report, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	repo, err := fluxrepo.Read(ctx, entry, read...)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	if !cfg.noDiscovery {
		d := cfg.discovery
		d.Helmfiles = d.Helmfiles || len(cfg.bootstrap) > 0
		d.BootstrapKustomizations = d.BootstrapKustomizations || len(cfg.bootstrapDirs) > 0
		conf, found, err := Discover(repo.Root, entry, d)
		if err != nil {
			return nil, err
		}
		opts = slices.Concat(conf, opts, found)
	}
	return Repository(ctx, repo, opts...)
}

// Repository lints a tree package fluxrepo read as Plan lints a stack:
// every rule, each finding with the file and line of the object and of
// the Kustomization that applies it, relative to the repository's root.
// The repository's Notes are findings of their rule (fluxrepo.NoteKind),
// after the layers' findings and before the hints. A root the reader
// found rather than was given (fluxrepo.WithRoot) is WithInferredRoot; a
// multitenant FluxInstance is WithNoCrossNamespaceRefs.
func Repository(ctx context.Context, repo *fluxrepo.Repository, opts ...Option) (*Report, error) {
	if repo.RootInferred {
		opts = append(slices.Clone(opts), WithInferredRoot())
	}
	if repo.NoCrossNamespaceRefs {
		opts = append(slices.Clone(opts), WithNoCrossNamespaceRefs())
	}
	report, err := Plan(ctx, repo.Plan, repo.Inputs, repo.Root, opts...)
	if err != nil {
		return nil, err
	}
	hints := slices.IndexFunc(report.Findings, func(f Finding) bool { return !f.Fails() })
	if hints < 0 {
		hints = len(report.Findings)
	}
	report.Findings = slices.Insert(report.Findings, hints, Group(notes(repo.Notes, dualOwned(report.Findings)))...)
	return report, nil
}

// dualOwned are the objects the dual-owner findings name: a Kustomization
// two parents apply is one finding there, with every place, and no note.
func dualOwned(fs []Finding) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if f.Rule != RuleDualOwner {
			continue
		}
		out[f.Object] = true
		for _, p := range f.Places {
			out[p.Object] = true
		}
	}
	return out
}

// notes are a repository's Notes as findings, errors of their rule,
// but for a graph note on an object a dual-owner finding names already
// (the same problem, said once).
func notes(ns []fluxrepo.Note, dual map[string]bool) []Finding {
	var out []Finding
	for _, n := range ns {
		if n.Kind == fluxrepo.NoteGraph && dual[n.Object] {
			continue
		}
		out = append(out, Finding{Rule: Rule(n.Kind), Severity: SeverityError, Object: n.Object, File: n.File, Line: n.Line, Message: n.Message})
	}
	return out
}
