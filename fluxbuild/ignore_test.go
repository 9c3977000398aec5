package fluxbuild

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/stretchr/testify/assert"
)

// mayMatchDefaults lets filterIgnored skip Flux's matcher only where the
// default patterns cannot match: every path the matcher ignores must be
// one mayMatchDefaults lets through, on the default patterns' own names and
// on random paths built from them.
func TestMayMatchDefaults(t *testing.T) {
	dir := t.TempDir()
	domain := strings.Split(dir, string(filepath.Separator))
	m := sourceignore.NewDefaultMatcher(nil, domain)
	names := []string{"a.yaml", "b.yml", "sub", ".git", ".github", ".circleci", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml",
		".drone.yml", "cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml", ".goreleaser.yml", ".sops.yaml",
		".flux.yaml", ".gitignore", ".gitmodules", ".gitattributes", "x.jpg", "y.tar.gz", "z.zip", "p.PNG", "kustomization.yaml", ".hidden.yaml"}
	check := func(parts []string, isDir bool) {
		entry := "./" + strings.Join(parts, "/")
		p := filepath.Join(dir, entry)
		if m.Match(strings.Split(p, string(filepath.Separator)), isDir) {
			assert.True(t, mayMatchDefaults(entry), "Flux ignores %s, so mayMatchDefaults must say it may", entry)
		}
	}
	for _, n := range names {
		check([]string{n}, false)
		check([]string{n}, true)
		check([]string{"sub", n}, false)
		check([]string{n, "a.yaml"}, false)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		parts := make([]string, 1+r.IntN(4))
		for i := range parts {
			parts[i] = names[r.IntN(len(names))]
		}
		check(parts, r.IntN(2) == 0)
	}
	assert.False(t, mayMatchDefaults("./apps/web.yaml"))
	assert.False(t, mayMatchDefaults("./base"))
}

// Ignored says of each file what Build does with it when it lists a
// folder: left out exactly when Build leaves it out, whatever the mix of
// .sourceignore files (above and below the folder), spec.ignore and
// default exclusions.
func TestIgnoredIsWhatBuildLeavesOut(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\n"
	}
	files := map[string]string{
		".sourceignore":              "/apps/drafts/\n",
		"apps/.sourceignore":         "*-test.yaml\n!keep-test.yaml\n",
		"apps/a.yaml":                cm("a"),
		"apps/a-test.yaml":           cm("a-test"),
		"apps/keep-test.yaml":        cm("keep-test"),
		"apps/drafts/d.yaml":         cm("d"),
		"apps/sub/.sourceignore":     "/local/\n",
		"apps/sub/s.yaml":            cm("s"),
		"apps/sub/local/l.yaml":      cm("l"),
		"apps/sub/spec-ignored.yaml": cm("spec-ignored"),
		"apps/.github/ci.yaml":       cm("ci"),
	}
	root := t.TempDir()
	for p, content := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, packed := range []bool{true, false} {
		src := Source{Dir: root, Ignore: "/apps/sub/spec-ignored.yaml\n", Packed: packed}
		ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./apps"}}
		objs, err := Build(t.Context(), src, ks)
		if err != nil {
			t.Fatal(err)
		}
		built := map[string]bool{}
		for _, o := range objs {
			built[o.File] = true
		}
		assert.True(t, built["apps/keep-test.yaml"] && built["apps/sub/s.yaml"], "packed %v: the files no rule leaves out are built", packed)
		assert.False(t, built["apps/a-test.yaml"] || built["apps/drafts/d.yaml"] || built["apps/sub/local/l.yaml"] || built["apps/sub/spec-ignored.yaml"], "packed %v: each rule leaves a file out", packed)
		dir := filepath.Join(root, "apps")
		for p := range files {
			if filepath.Ext(p) != ".yaml" || filepath.Base(p) == ".sourceignore" {
				continue
			}
			ignored, err := Ignored(src, dir, filepath.Join(root, filepath.FromSlash(p)))
			if err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, !built[p], ignored, "packed %v: Build read %s: %v; Ignored says %v", packed, p, built[p], ignored)
		}
		outside, _ := Ignored(src, dir, filepath.Join(root, "other", "x.yaml"))
		assert.False(t, outside, "a file outside the folder listed")
	}
}
