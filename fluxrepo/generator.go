package fluxrepo

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/lint"
)

// An ArtifactGenerator (source.extensions.fluxcd.io, Flux ≥ 2.7) makes
// ExternalArtifacts by copying files of its sources:
//
//	spec:
//	  sources: [{alias: repo, kind: GitRepository, name: flux-system}]
//	  artifacts:
//	    - name: apps
//	      copy:
//	        - {from: "@repo/apps/**", to: "@artifact/", exclude: ["*.md"]}
//
// The reader lays such an artifact out in a directory of its own (symbolic
// links to the repository's files), builds its Kustomizations from there,
// and names every file by the one it links to.

// generator is what the tree says an ExternalArtifact is made of.
type generator struct {
	namespace, name string // the ExternalArtifact
	file            string // where the generator is declared
	line            int
	sources         map[string]SourceRef // alias → source
	copies          []copyRule

	dir   string            // the artifact, laid out; "" until it is
	links map[string]string // laid-out path → repository path (both slash, relative)
	err   error
}

type copyRule struct {
	from, to string
	exclude  []string
}

func (r *reader) addGenerator(o *fluxbuild.Object) {
	var spec struct {
		Spec struct {
			Sources []struct {
				Alias, Kind, Name, Namespace string
			} `json:"sources"`
			Artifacts []struct {
				Name string `json:"name"`
				Copy []struct {
					From    string   `json:"from"`
					To      string   `json:"to"`
					Exclude []string `json:"exclude"`
				} `json:"copy"`
			} `json:"artifacts"`
		} `json:"spec"`
	}
	if err := decodeNode(o.Node, &spec); err != nil {
		r.note(lint.RuleSource, o, "%s: %v", o, err)
		return
	}
	ns := namespaceOr(o.Namespace, DefaultNamespace)
	srcs := map[string]SourceRef{}
	for _, s := range spec.Spec.Sources {
		srcs[s.Alias] = SourceRef{Kind: s.Kind, Namespace: namespaceOr(s.Namespace, ns), Name: s.Name}
	}
	for _, a := range spec.Spec.Artifacts {
		g := &generator{namespace: ns, name: a.Name, file: o.File, line: o.Line, sources: srcs}
		for _, c := range a.Copy {
			g.copies = append(g.copies, copyRule{from: c.From, to: c.To, exclude: c.Exclude})
			// A copy that names no source of spec.sources, or no place
			// in the artifact, fails the generator in Flux too: a broken
			// source, not one lint merely cannot read offline.
			if alias, _, ok := splitAlias(c.From); !ok || srcs[alias] == (SourceRef{}) {
				r.note(lint.RuleSource, o, "artifact %q: copy from %q names no source of spec.sources (@alias/path): Flux fails the ArtifactGenerator, and ExternalArtifact/%s/%s is never made", a.Name, c.From, ns, a.Name)
			} else if !strings.HasPrefix(c.To, "@artifact") {
				r.note(lint.RuleSource, o, "artifact %q: copy to %q is not in the artifact (@artifact/path): Flux fails the ArtifactGenerator, and ExternalArtifact/%s/%s is never made", a.Name, c.To, ns, a.Name)
			}
		}
		r.generators[ns+"/"+a.Name] = g
	}
}

// materialize lays out the artifact g makes, once.
func (r *reader) materialize(g *generator) (string, error) {
	if g.dir != "" || g.err != nil {
		return g.dir, g.err
	}
	g.err = r.layOut(g)
	return g.dir, g.err
}

func (r *reader) layOut(g *generator) error {
	dir, err := os.MkdirTemp("", "fluxpack-artifact-")
	if err != nil {
		return err
	}
	r.temps = append(r.temps, dir)
	g.links = map[string]string{}
	for _, c := range g.copies {
		alias, from, ok := splitAlias(c.from)
		if !ok {
			return fmt.Errorf("copy from %q: want @alias/path", c.from)
		}
		ref, ok := g.sources[alias]
		if !ok {
			return fmt.Errorf("copy from %q: no source has alias %q", c.from, alias)
		}
		srcDir, ok := r.cfg.sources[ref]
		if !ok && r.cfg.fetcher != nil && fetchable(ref) {
			// --sources online: the generator's source, fetched.
			if o, defined := r.srcObjs[ref]; defined {
				if f := r.fetch(ref, o, 0); f.dir != "" {
					srcDir, ok = f.dir, true
				} else {
					return fmt.Errorf("copy from %q: %s", c.from, f.why)
				}
			}
		}
		if !ok {
			return fmt.Errorf("copy from %q: its source %s is not available offline", c.from, ref)
		}
		to, ok := strings.CutPrefix(c.to, "@artifact")
		if !ok {
			return fmt.Errorf("copy to %q: want @artifact/path", c.to)
		}
		files, base, err := matchFiles(srcDir, from, c.exclude)
		if err != nil {
			return fmt.Errorf("copy from %q: %w", c.from, err)
		}
		for _, f := range files {
			dest := copyDest(f, base, from, to)
			if !filepath.IsLocal(filepath.FromSlash(dest)) {
				return fmt.Errorf("copy to %q: %s lands outside the artifact", c.to, dest)
			}
			abs := filepath.Join(dir, filepath.FromSlash(dest))
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return err
			}
			_ = os.Remove(abs) // a later copy overwrites an earlier one
			if err := os.Symlink(filepath.Join(srcDir, filepath.FromSlash(f)), abs); err != nil {
				return err
			}
			g.links[dest] = relTo(r.root, filepath.Join(srcDir, filepath.FromSlash(f)))
		}
	}
	g.dir = dir
	return nil
}

// splitAlias splits "@alias/rest" into alias and rest.
func splitAlias(s string) (alias, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, "@")
	if !ok {
		return "", "", false
	}
	alias, rest, _ = strings.Cut(s, "/")
	return alias, rest, alias != ""
}

// matchFiles returns the files (slash paths relative to dir) that pattern
// names: a file, a directory (its files, recursively), or a glob whose
// "**" matches any number of directories. base is the part of pattern
// before its first glob segment, or the pattern itself.
func matchFiles(dir, pattern string, exclude []string) (files []string, base string, err error) {
	pattern = strings.Trim(path.Clean("/"+pattern), "/")
	segs := strings.Split(pattern, "/")
	i := slices.IndexFunc(segs, func(s string) bool { return strings.ContainsAny(s, "*?[") })
	if i < 0 {
		base = pattern
	} else {
		base = strings.Join(segs[:i], "/")
	}
	root := filepath.Join(dir, filepath.FromSlash(base))
	fi, err := os.Stat(root)
	if err != nil {
		return nil, base, err
	}
	if !fi.IsDir() {
		return []string{base}, path.Dir(base), nil
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel := relTo(dir, p)
		if i >= 0 && !globMatch(segs, strings.Split(rel, "/")) {
			return nil
		}
		for _, x := range exclude {
			if ok, _ := path.Match(x, path.Base(rel)); ok {
				return nil
			}
			if ok, _ := path.Match(x, strings.TrimPrefix(rel, base+"/")); ok {
				return nil
			}
		}
		files = append(files, rel)
		return nil
	})
	if i < 0 {
		base = path.Dir(base) // a directory is copied whole, under its own name
	}
	return files, base, err
}

// globMatch matches path segments against pattern segments, "**" standing
// for any number of them.
func globMatch(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for k := 0; k <= len(segs); k++ {
			if globMatch(pat[1:], segs[k:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], segs[0])
	return err == nil && ok && globMatch(pat[1:], segs[1:])
}

// copyDest is where file f (matched by from, whose non-glob part is base)
// lands under to: to itself when to names a file and from a single one,
// else to joined with f's path below base.
func copyDest(f, base, from, to string) string {
	to = strings.TrimPrefix(to, "/")
	single := !strings.ContainsAny(from, "*?[") && f == strings.Trim(path.Clean("/"+from), "/")
	if single && to != "" && !strings.HasSuffix(to, "/") {
		return path.Clean(to)
	}
	below := strings.TrimPrefix(f, base+"/")
	if base == "." || base == "" {
		below = f
	}
	return path.Clean(path.Join(to, below))
}

func relTo(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// original names a file of a laid-out artifact as the repository file it
// links to.
func (g *generator) original(file string) string {
	if o, ok := g.links[file]; ok {
		return o
	}
	return file
}
