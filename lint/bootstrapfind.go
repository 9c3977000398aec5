package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// bootstrapCommand matches what a bootstrap script builds or applies with
// kustomize: `kustomize build DIR` and `kubectl apply -k DIR`.
var bootstrapCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:kustomize\s+build|kubectl\s+apply\b[^|;&\n]*?\s-k)\s+["']?([^\s|;&"']+)`)
})

// FindBootstrapKustomizations returns the folders the bootstrap scripts of
// a repository at root (bootstrapScripts; those of the cluster of the
// entry point entry, when not "") build with kustomize and apply before
// Flux: their `kustomize build DIR` and `kubectl apply -k DIR`, that exist
// and hold a kustomization.
func FindBootstrapKustomizations(root, entry string) []string {
	var out []string
	for _, script := range bootstrapScripts(root, entry) {
		for _, m := range bootstrapCommand().FindAllStringSubmatch(script.text, -1) {
			p := m[1]
			if strings.ContainsAny(p, "${}") {
				continue // a variable the script sets: not known here
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p) // as run from the repository's root
			}
			if rel, err := filepath.Rel(root, p); err != nil || !filepath.IsLocal(rel) {
				continue
			}
			if !hasKustomization(p) || slices.Contains(out, p) {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// FindBootstrapNamespaces returns the namespaces the bootstrap scripts of
// a repository at root (bootstrapScripts; those of the cluster of entry,
// when not "") create before Flux with `kubectl create
// namespace NAME` (or ns), as they do for the Secrets Flux's first
// Kustomizations decrypt or substitute with.
func FindBootstrapNamespaces(root, entry string) []string {
	var out []string
	for _, script := range bootstrapScripts(root, entry) {
		for _, m := range createNamespace().FindAllStringSubmatch(script.text, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// createNamespace matches `kubectl create namespace NAME`, with a name
// written out (not a variable).
var createNamespace = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`kubectl\s+(?:[^|;&\n]*?\s)?create\s+(?:namespace|ns)\s+([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)(?:[\s;|&]|$)`)
})

// script is a bootstrap script's text, with the folders it names relative
// to itself resolved.
type script struct{ text string }

// bootstrapScripts reads a repository's bootstrap scripts: its justfiles,
// Taskfiles, Makefiles and shell scripts at the root, in .taskfiles/*/,
// and in and under the bootstrap folders (bootstrapDirs) and scripts/,
// with just's {{ source_directory() }} and {{ justfile_directory() }}, and
// a shell script's $(dirname "$0"), resolved.
func bootstrapScripts(root, entry string) []script {
	var paths []string
	add := func(dir string, subdirs bool) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				if subdirs && n != ".git" {
					sub, _ := os.ReadDir(filepath.Join(dir, n))
					for _, f := range sub {
						if bootstrapScript(f.Name()) && !f.IsDir() {
							paths = append(paths, filepath.Join(dir, n, f.Name()))
						}
					}
				}
				continue
			}
			if bootstrapScript(n) {
				paths = append(paths, filepath.Join(dir, n))
			}
		}
	}
	add(root, false)
	add(filepath.Join(root, ".taskfiles"), true)
	add(filepath.Join(root, "scripts"), true)
	for _, d := range bootstrapDirs(root, entry) {
		add(d, true)
	}
	var out []script
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		here := filepath.Dir(p)
		text := string(data)
		for _, r := range []struct{ from, to string }{
			{"{{ source_directory() }}", here}, {"{{source_directory()}}", here},
			{"{{ justfile_directory() }}", root}, {"{{justfile_directory()}}", root},
			{`$(dirname "$0")`, here}, {"$(dirname $0)", here}, {`"${0%/*}"`, here},
		} {
			text = strings.ReplaceAll(text, r.from, r.to)
		}
		out = append(out, script{text: text})
	}
	return out
}

func bootstrapScript(name string) bool {
	switch strings.ToLower(name) {
	case "justfile", ".justfile", "makefile", "taskfile.yaml", "taskfile.yml":
		return true
	}
	return strings.HasSuffix(name, ".just") || strings.HasSuffix(name, ".sh")
}

func hasKustomization(dir string) bool {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// FindHelmfiles returns the helmfiles of the bootstrap step of a
// repository at root (of the cluster of the entry point entry, when not
// ""), where people keep them: helmfile.yaml at the root, and in each
// bootstrap folder (bootstrapDirs) helmfile.yaml, helmfile.yaml.gotmpl and the YAML
// files of helmfile/ and helmfile.d/ that have releases; helmfile.d/ at
// the root too.
func FindHelmfiles(root, entry string) []string {
	var out []string
	add := func(f string) {
		if _, err := os.Stat(f); err == nil && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	addDir := func(dir string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
				continue
			}
			f := filepath.Join(dir, e.Name())
			if releases, _, err := readHelmfile(f); err == nil && len(releases) > 0 {
				out = append(out, f)
			}
		}
	}
	add(filepath.Join(root, "helmfile.yaml"))
	addDir(filepath.Join(root, "helmfile.d"))
	for _, d := range bootstrapDirs(root, entry) {
		add(filepath.Join(d, "helmfile.yaml"))
		if f := filepath.Join(d, "helmfile.yaml.gotmpl"); fileExists(f) {
			if releases, _, err := readHelmfile(f); err == nil && len(releases) > 0 {
				add(f) // a templated helmfile, read as far as YAML allows
			}
		}
		addDir(filepath.Join(d, "helmfile"))
		addDir(filepath.Join(d, "helmfile.d"))
	}
	return out
}

// bootstrapDirs are the folders where repositories keep the bootstrap
// step of a cluster: for an entry point (a folder under root), the
// bootstrap/ folders on the way from it up to root (kubernetes/bootstrap/
// for kubernetes/flux/cluster, kubernetes/main/bootstrap/ for
// kubernetes/main/cluster, each cluster's own where a repository has
// several); without one, bootstrap/ at the root or in a folder of the root.
func bootstrapDirs(root, entry string) []string {
	var out []string
	isDir := func(d string) bool {
		fi, err := os.Stat(d)
		return err == nil && fi.IsDir()
	}
	if entry != "" {
		rel, err := filepath.Rel(absPath(root), absPath(entry))
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			rel = "."
		}
		for d := filepath.Join(root, rel); ; d = filepath.Dir(d) {
			if b := filepath.Join(d, "bootstrap"); isDir(b) {
				out = append(out, b)
			}
			if r, err := filepath.Rel(root, d); err != nil || r == "." {
				return out
			}
		}
	}
	if isDir(filepath.Join(root, "bootstrap")) {
		out = append(out, filepath.Join(root, "bootstrap"))
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "bootstrap" {
			continue
		}
		if d := filepath.Join(root, e.Name(), "bootstrap"); isDir(d) {
			out = append(out, d)
		}
	}
	return out
}
