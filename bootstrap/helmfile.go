package bootstrap

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// Release is a release of a bootstrap helmfile.
type Release struct {
	File     string
	Chart    string
	CRDsOnly bool
	// Namespace is the namespace helmfile creates for it (createNamespace
	// is true unless the release or helmDefaults say false), when the
	// helmfile syncs and the namespace is written out; else "".
	Namespace string
}

// ReadHelmfile returns a helmfile's releases (chart names and the
// namespaces it creates), and whether it only renders their CRDs.
// Go templates (a helmfile.yaml.gotmpl's) are not run: a file that is not
// YAML as written is read again with its template actions left out (a
// line of actions only, such as {{- $x := readFile … }}, dropped; an
// action within a line read as a value nobody writes), as far as YAML
// then allows. A templated chart falls back on the release's name, a
// templated namespace is not known.
//
// A file read before with the same content is not parsed again: a lint of
// each side of a review, and its chart rendering, read the same helmfiles.
func ReadHelmfile(file string) (releases []Release, crdsOnly bool, err error) {
	data, err := inputfile.Read(file)
	if err != nil {
		return nil, false, err
	}
	key := file + "\x00" + string(data)
	if v, ok := helmfiles.Load(key); ok {
		h := v.(helmfileRead)
		return slices.Clone(h.releases), h.crdsOnly, h.err
	}
	releases, crdsOnly, err = readHelmfile(file, string(data))
	if err != nil && strings.Contains(string(data), "{{") {
		if r, c, err2 := readHelmfile(file, ExpandTemplate(string(data))); err2 == nil {
			releases, crdsOnly, err = r, c, nil
		}
	}
	helmfiles.Store(key, helmfileRead{slices.Clone(releases), crdsOnly, err})
	return releases, crdsOnly, err
}

// helmfiles are the helmfiles read, by file and content.
var helmfiles sync.Map

type helmfileRead struct {
	releases []Release
	crdsOnly bool
	err      error
}

// templated reports whether a value holds a template action.
func templated(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, TemplateMark)
}

func readHelmfile(file, text string) (releases []Release, crdsOnly bool, err error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc struct {
			HelmDefaults struct {
				Args            []string `yaml:"args"`
				CreateNamespace any      `yaml:"createNamespace"`
			} `yaml:"helmDefaults"`
			Releases []struct {
				Name            string `yaml:"name"`
				Namespace       string `yaml:"namespace"`
				Chart           string `yaml:"chart"`
				Installed       any    `yaml:"installed"`
				CreateNamespace any    `yaml:"createNamespace"`
			} `yaml:"releases"`
		}
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, false, fmt.Errorf("not a helmfile: %w", err)
		}
		if slices.Contains(doc.HelmDefaults.Args, "--include-crds") {
			crdsOnly = true
		}
		for _, r := range doc.Releases {
			if r.Installed == false {
				continue // a templated one is taken as installed, helmfile's default
			}
			rel := Release{File: file, Chart: r.Name}
			if r.Chart != "" && !templated(r.Chart) {
				rel.Chart = path.Base(strings.TrimSuffix(r.Chart, "/"))
			}
			create := r.CreateNamespace
			if create == nil {
				create = cmp.Or[any](doc.HelmDefaults.CreateNamespace, true)
			}
			// Created when true; a templated one may not be.
			if create == true && !templated(r.Namespace) {
				rel.Namespace = r.Namespace
			}
			if rel.Chart != "" {
				releases = append(releases, rel)
			}
		}
	}
	if crdsOnly {
		// Rendered and applied with kubectl: no release, no namespace.
		for i := range releases {
			releases[i].Namespace = ""
		}
	}
	return releases, crdsOnly, nil
}
