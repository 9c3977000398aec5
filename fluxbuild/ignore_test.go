package fluxbuild

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

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
