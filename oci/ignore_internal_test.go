package oci

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/google/go-cmp/cmp"
)

// TestIgnorerMatchesSourceignore checks, on random trees, .sourceignore
// files and patterns, that the walk keeps exactly the paths that
// sourceignore's matcher keeps when applied top-down (an excluded directory's
// contents excluded, as in git).
func TestIgnorerMatchesSourceignore(t *testing.T) {
	names := []string{"a", "b", "c.yaml", "d.png", ".git", "keep.yaml", "x.tar.gz", "team", "sub", "e.json", "img.JPG"}
	patterns := []string{"*.yaml", "!keep.yaml", "a/", "b", "sub/*.yaml", "**/c.yaml", "team/**/e.json", "/a", "d.*",
		"[ab]", "!team", "*", "!*.json", "#comment", "", "  ", "a/b/", "**/sub/", "x?tar.gz", "!.git", "!.git/", "[", "team/",
		"!sub", "sub/**", "*.png ", `\#x`, "!a/c.yaml", "**/", "e.json/", "**/team/*"}
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		root := t.TempDir()
		var dirs []string
		var mk func(dir string, depth int)
		mk = func(dir string, depth int) {
			dirs = append(dirs, dir)
			for range 1 + r.IntN(4) {
				n := names[r.IntN(len(names))]
				p := filepath.Join(dir, n)
				if _, err := os.Lstat(p); err == nil {
					continue
				}
				if depth < 3 && r.IntN(3) == 0 {
					if err := os.Mkdir(p, 0o755); err != nil {
						t.Fatal(err)
					}
					mk(p, depth+1)
				} else if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		mk(root, 0)
		pick := func() []string {
			var ps []string
			for range r.IntN(4) {
				ps = append(ps, patterns[r.IntN(len(patterns))])
			}
			return ps
		}
		for _, d := range dirs {
			if r.IntN(3) == 0 {
				if err := os.WriteFile(filepath.Join(d, ".sourceignore"), []byte(strings.Join(pick(), "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		user := pick()

		want := referenceWalk(t, root, user)
		tr, err := scanTree(root, &options{ignorePaths: user}, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range tr.entries[1:] {
			got = append(got, e.name)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			var files []string
			filepath.WalkDir(root, func(p string, d fs.DirEntry, _ error) error {
				rel, _ := filepath.Rel(root, p)
				if d.Name() == ".sourceignore" {
					b, _ := os.ReadFile(p)
					rel += " = " + strings.ReplaceAll(string(b), "\n", " | ")
				}
				files = append(files, rel)
				return nil
			})
			t.Fatalf("seed %d, user patterns %q, tree:\n%s\n(-sourceignore +fluxpack):\n%s", seed, user, strings.Join(files, "\n"), diff)
		}
	}
}

func referenceWalk(t *testing.T, root string, user []string) []string {
	domain := strings.Split(filepath.Clean(root), string(filepath.Separator))
	ps := sourceignore.ReadPatterns(strings.NewReader(strings.Join(DefaultIgnorePaths(), "\n")), domain)
	fromFiles, err := sourceignore.LoadIgnorePatterns(root, domain)
	if err != nil {
		t.Fatal(err)
	}
	ps = append(ps, fromFiles...)
	ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(strings.Join(user, "\n")), domain)...)
	m := sourceignore.NewMatcher(ps)
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if m.Match(strings.Split(p, string(filepath.Separator)), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clip(out)
}
