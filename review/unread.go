package review

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
	"go.yaml.in/yaml/v3"
)

// unread reports whether no layer can read any of files (slash-separated,
// relative to root, the head's tree) on either side, so that the two sides
// are read from the same inputs and a comparison would find nothing: a
// change to the CI configuration, the documentation, a script. It decides
// from one walk of root, before anything is built, and says no whenever it
// cannot be sure. A file is unread when
//
//   - every GitRepository the tree holds leaves it out of its artifact
//     (source-controller's default exclusions such as /.github/, the
//     .sourceignore files, the source's spec.ignore), and so does the
//     default artifact of a source the tree does not hold; or
//   - it is not a manifest (not .yaml, .yml or .json, not a kustomization
//     file, not a packaged chart): kustomize then reads it only where a
//     kustomization names it, and the file's name is in no manifest of
//     the tree; and it is in no chart folder (Helm reads every file of a
//     chart).
//
// It says no for every file when the tree holds a symbolic link (a named
// link can read any file), an ArtifactGenerator (its copy rules take
// globs) or a GitRepository with spec.include (another source's files
// copied in). The two sides hold the same manifests when it says yes:
// every changed file is a non-manifest or left out of every artifact, so
// what it read on the head is what the base has.
func unread(root string, files []string) (bool, error) {
	if len(files) == 0 {
		return false, nil
	}
	// Most changes touch a manifest: no walk for those.
	for _, f := range files {
		if manifestName(f) && !defaultExcluded(f) {
			return false, nil
		}
	}
	t, err := scanTree(root)
	if err != nil || t.unsure {
		return false, err
	}
	for _, f := range files {
		if t.excluded(f) {
			continue
		}
		if manifestName(f) || t.inChart(f) || t.named(path.Base(f)) {
			return false, nil
		}
	}
	return true, nil
}

// manifestName reports whether a file's name makes it something kustomize
// or fluxpack reads without its name being written anywhere: a manifest
// (Flux generates a kustomization of a folder's manifests), a
// kustomization, a .sourceignore, a packaged chart (--charts).
func manifestName(f string) bool {
	base := path.Base(f)
	switch strings.ToLower(path.Ext(base)) {
	case ".yaml", ".yml", ".json", ".tgz":
		return true
	}
	return base == "Kustomization" || base == sourceignore.IgnoreFile || strings.HasSuffix(base, ".tar.gz")
}

// defaultExcluded reports whether source-controller's default exclusions
// leave f out of a GitRepository's artifact.
func defaultExcluded(f string) bool {
	return sourceignore.NewDefaultMatcher(nil, nil).Match(strings.Split(f, "/"), false)
}

// tree is what unread needs to know of the head's tree.
type tree struct {
	// unsure is set when the tree holds what unread cannot follow.
	unsure bool
	// ignores are the .sourceignore patterns, each in its folder's domain.
	ignores []gitignore.Pattern
	// specIgnores are the spec.ignore of each GitRepository.
	specIgnores []string
	// artifacts match what each artifact leaves out (excluded makes them).
	artifacts []gitignore.Matcher
	// charts are the chart folders (those holding a Chart.yaml).
	charts []string
	// manifests are the contents of every manifest.
	manifests [][]byte
}

func scanTree(root string) (*tree, error) {
	t := &tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if t.unsure {
			return filepath.SkipAll
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		switch {
		case d.IsDir():
			if name == ".git" && rel != "." {
				return filepath.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			t.unsure = true
			return nil
		case !d.Type().IsRegular():
			return nil
		case name == ".git": // a linked worktree's pointer
			return nil
		case name == "Chart.yaml":
			t.charts = append(t.charts, path.Dir(rel))
		case name == sourceignore.IgnoreFile:
			var domain []string
			if dir := path.Dir(rel); dir != "." {
				domain = strings.Split(dir, "/")
			}
			ps, err := sourceignore.ReadIgnoreFile(p, domain)
			if err != nil {
				return err
			}
			t.ignores = append(t.ignores, ps...)
			return nil
		}
		if !manifestName(rel) || strings.HasSuffix(name, ".tgz") || strings.HasSuffix(name, ".tar.gz") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		t.manifests = append(t.manifests, data)
		if bytes.Contains(data, []byte("ArtifactGenerator")) {
			t.unsure = true
		}
		if bytes.Contains(data, []byte("GitRepository")) {
			t.gitRepositories(data)
		}
		return nil
	})
	return t, err
}

// gitRepositories records the spec.ignore of the GitRepositories of a
// manifest; one with spec.include, or one it cannot read, makes t unsure.
func (t *tree) gitRepositories(data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Spec       struct {
				Ignore  *string `yaml:"ignore"`
				Include []any   `yaml:"include"`
			} `yaml:"spec"`
		}
		err := dec.Decode(&doc)
		if err != nil {
			if !errors.Is(err, io.EOF) && bytes.Contains(data, []byte("kind: GitRepository")) {
				// Not YAML kustomize reads either, or a template:
				// whatever it is, be sure.
				t.unsure = true
			}
			return
		}
		if doc.Kind != "GitRepository" || !strings.HasPrefix(doc.APIVersion, "source.toolkit.fluxcd.io/") {
			continue
		}
		if len(doc.Spec.Include) > 0 {
			t.unsure = true
		}
		if doc.Spec.Ignore != nil {
			t.specIgnores = append(t.specIgnores, *doc.Spec.Ignore)
		}
	}
}

// excluded reports whether every artifact made of the tree leaves f out:
// the default one (exclusions and .sourceignore files), and each
// GitRepository's with its spec.ignore.
func (t *tree) excluded(f string) bool {
	if t.artifacts == nil {
		t.artifacts = []gitignore.Matcher{sourceignore.NewDefaultMatcher(t.ignores, nil)}
		for _, ignore := range t.specIgnores {
			ps := append(slices.Clone(t.ignores), sourceignore.ReadPatterns(strings.NewReader(ignore), nil)...)
			t.artifacts = append(t.artifacts, sourceignore.NewDefaultMatcher(ps, nil))
		}
	}
	p := strings.Split(f, "/")
	for _, m := range t.artifacts {
		if !m.Match(p, false) {
			return false
		}
	}
	return true
}

// inChart reports whether f is in a chart folder.
func (t *tree) inChart(f string) bool {
	for _, c := range t.charts {
		if c == "." || strings.HasPrefix(f, c+"/") {
			return true
		}
	}
	return false
}

// named reports whether a manifest of the tree holds name.
func (t *tree) named(name string) bool {
	for _, m := range t.manifests {
		if bytes.Contains(m, []byte(name)) {
			return true
		}
	}
	return false
}
