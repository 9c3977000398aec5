package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/review"
)

// runReview is diff ENTRY...: review.Compare of the base and the tree as
// it is now, for each entry point.
func runReview(cmd *cobra.Command, f *rootFlags, kind int, entries []string, out string, rf *reviewFlags, repo *repoFlags, charts *chartFlags) error {
	switch out {
	case "", "json", "markdown", "github", "sarif", "unified":
	default:
		return formatError(out, "markdown, github, sarif, unified, json or nothing")
	}
	files, err := reportFiles(rf.reports)
	if err != nil {
		return err
	}
	if rf.base != "" && rf.baseDir != "" {
		return fmt.Errorf("give one of --base and --base-dir")
	}
	var abs []string
	for _, entry := range entries {
		a, err := filepath.Abs(entry)
		if err != nil {
			return err
		}
		if _, err := os.Stat(a); err != nil {
			return fmt.Errorf("reading the entry point %s: %w", entry, err)
		}
		abs = append(abs, a)
	}
	headRoot, err := reviewRoot(repo.root, rf.baseDir != "", entries[0], abs[0])
	if err != nil {
		return err
	}
	var rels []string
	for i, a := range abs {
		rel, err := filepath.Rel(headRoot, a)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return fmt.Errorf("reading the entry point %s: it is not inside the repository %s", entries[i], headRoot)
		}
		rels = append(rels, filepath.ToSlash(rel))
	}
	ctx, chartOpts, done, err := charts.lintOptions(cmd.Context(), f.log)
	if err != nil {
		return err
	}
	defer done()
	readOpts, err := repo.sourceOptions()
	if err != nil {
		return err
	}
	if f.debug {
		// What the reads leave out as Flux does, and kustomize's
		// warnings: logs, as for lint (stderr holds the summary line
		// alone unless --debug).
		readOpts = append(readOpts, fluxrepo.WithLogger(f.log))
	}
	opts := []review.Option{review.WithReadOptions(append(charts.readOptions(), readOpts...)...)}
	if rf.all {
		opts = append(opts, review.WithAll())
	}
	if len(rf.strip) > 0 {
		opts = append(opts, review.WithStripAttrs(rf.strip...))
	}
	var reps []*review.Report
	if kind == reviewEntry && rf.baseDir == "" {
		// The library call: the base revision read from Git, what the
		// repository says for lint found as lint.Tree finds it.
		ropts := []review.RevisionOption{review.WithDiscovery(repo.discovery())}
		if keep := keptRevisions(); keep != "" {
			ropts = append(ropts, review.WithKeptRevisions(keep))
		}
		if repo.root != "" {
			ropts = append(ropts, review.WithRoot(repo.root))
		}
		opts = append(opts, review.WithLintOptions(append(chartOpts, repo.lintOptions()...)...))
		for _, e := range entries {
			rep, err := review.CompareRevision(ctx, e, rf.base, ropts, opts...)
			if err != nil {
				return err
			}
			reps = append(reps, rep)
		}
	} else if reps, err = compareDirs(ctx, kind, headRoot, rels, abs, rf, repo, chartOpts, opts); err != nil {
		return err
	}
	if err := writeReports(cmd.OutOrStdout(), out, reps, rf.limit, cmd.Root().Version); err != nil {
		return err
	}
	for _, file := range files {
		var b bytes.Buffer
		if err := writeReports(&b, file.format, reps, rf.limit, cmd.Root().Version); err != nil {
			return err
		}
		if err := atomicfile.WriteFileContext(ctx, file.path, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--report %s=%s: %w", cmp.Or(file.format, "text"), file.path, err)
		}
	}
	changed, objects, introduced, others, fixed, layers, unchecked := 0, 0, 0, 0, 0, 0, 0
	for _, r := range reps {
		if r.Changed() {
			changed++
		}
		objects += len(r.Objects)
		races, other := review.Tally(r.Findings.Introduced)
		introduced, others = introduced+races, others+other
		fixed += len(r.Findings.Fixed)
		layers += r.Findings.Layers
		unchecked += max(r.Findings.Layers-r.Findings.Checked, 0)
	}
	names := rels
	if len(reps) == 1 {
		names = []string{reps[0].Entry}
	}
	// A path that no longer builds is no race: said apart.
	intro := count(introduced, "race")
	if others > 0 {
		intro += " and " + count(others, "other problem")
	}
	summary := fmt.Sprintf("%s: %s changed, %s introduced, %d fixed", strings.Join(names, ", "), count(objects, "object"), intro, fixed)
	if len(reps) > 1 {
		summary = fmt.Sprintf("%d of %d clusters changed: %s, %s introduced, %d fixed", changed, len(reps), count(objects, "object"), intro, fixed)
	}
	if unchecked > 0 {
		// "0 races introduced" says nothing of the layers lint could not
		// check: the report lists them, with why.
		summary += fmt.Sprintf("; races not checked in %d of %d layers", unchecked, layers)
	}
	if changed > 0 && !rf.exitZero {
		return &FindingError{Msg: summary}
	}
	_, err = fmt.Fprintln(cmd.ErrOrStderr(), "fluxpack: "+summary)
	return err
}

// reportFile is a --report: the report in format ("" for text) written to
// path.
type reportFile struct{ format, path string }

// reportFiles reads the --report flags, FORMAT=FILE each. A file named
// twice is an error: one would overwrite the other.
func reportFiles(specs []string) ([]reportFile, error) {
	var out []reportFile
	seen := map[string]bool{}
	for _, spec := range specs {
		format, path, ok := strings.Cut(spec, "=")
		if !ok || path == "" {
			return nil, fmt.Errorf("invalid --report %q: want FORMAT=FILE, such as markdown=report.md", spec)
		}
		switch format {
		case "text":
			format = ""
		case "json", "markdown", "github", "sarif", "unified":
		default:
			return nil, fmt.Errorf("invalid --report %q: the format %q is not one of text, markdown, github, sarif, unified and json", spec, format)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("invalid --report %q: %w", spec, err)
		}
		if seen[abs] {
			return nil, fmt.Errorf("invalid --report %q: %s is named by another --report too", spec, path)
		}
		seen[abs] = true
		out = append(out, reportFile{format: format, path: path})
	}
	return out, nil
}

// reviewRoot is the repository's root for diff ENTRY: --root, else the
// top of the Git working tree (or, with --base-dir, the folder holding
// .git above the entry, as lint finds it).
func reviewRoot(root string, baseDir bool, entry, absEntry string) (string, error) {
	var err error
	switch {
	case root != "":
	case baseDir:
		root, err = fluxrepo.Root(entry)
	default:
		root, err = review.Top(absEntry)
	}
	if err != nil {
		return "", err
	}
	return filepath.Abs(root)
}

func writeReports(w io.Writer, out string, reps []*review.Report, limit int, version string) error {
	switch out {
	case "json":
		return writeJSON(w, reps)
	case "markdown":
		return review.WriteMarkdown(w, reps, review.MarkdownOptions{Limit: limit})
	case "sarif":
		return review.WriteSARIF(w, reps, version)
	}
	color := useColor(w)
	for i, r := range reps {
		var err error
		switch out {
		case "github":
			err = r.WriteGitHub(w)
		case "unified":
			err = r.WriteUnified(w)
		default:
			if i > 0 {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			err = r.WriteText(w, review.TextOptions{Color: color})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compareDirs compares the stack, the fleet, or the entry points with
// --base-dir: the base is a folder, or the tree at the base revision.
func compareDirs(ctx context.Context, kind int, headRoot string, rels, abs []string, rf *reviewFlags, repo *repoFlags, chartOpts []lint.Option, opts []review.Option) ([]*review.Report, error) {
	baseRoot, baseName, headName := rf.baseDir, rf.baseDir, headRoot
	if rf.baseDir == "" {
		var rev review.Revision
		var err error
		if rf.base != "" {
			rev, err = review.Resolve(headRoot, rf.base)
		} else {
			rev, err = review.DefaultBase(headRoot)
		}
		if err != nil {
			return nil, err
		}
		root, cleanup, err := review.Base(ctx, headRoot, rev, keptRevisions())
		if err != nil {
			return nil, err
		}
		defer func() { _ = cleanup() }()
		baseRoot, baseName, headName = root, rev.String(), "working tree"
	}
	var lintOpts []lint.Option
	var err error
	if kind == reviewEntry {
		lintOpts, err = repo.entryLintOptions(abs[0])
	} else {
		lintOpts, err = repo.configOptions(filepath.Dir(abs[0]))
		lintOpts = append(lintOpts, repo.lintOptions()...)
	}
	if err != nil {
		return nil, err
	}
	opts = append(opts, review.WithLintOptions(append(chartOpts, lintOpts...)...), review.WithNames(baseName, headName))
	switch kind {
	case reviewStack:
		rep, err := review.CompareStack(ctx, baseRoot, headRoot, rels[0], opts...)
		if err != nil {
			return nil, err
		}
		return []*review.Report{rep}, nil
	case reviewFleet:
		return review.CompareFleet(ctx, baseRoot, headRoot, rels[0], opts...)
	}
	var reps []*review.Report
	for _, rel := range rels {
		rep, err := review.Compare(ctx, baseRoot, headRoot, rel, opts...)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}
