package bootstrap

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

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
// Documents with Go templates in their structure are read as far as YAML
// allows; a templated chart falls back on the release's name, a templated
// namespace is not known.
func ReadHelmfile(file string) (releases []Release, crdsOnly bool, err error) {
	data, err := inputfile.Read(file)
	if err != nil {
		return nil, false, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc struct {
			HelmDefaults struct {
				Args            []string `yaml:"args"`
				CreateNamespace *bool    `yaml:"createNamespace"`
			} `yaml:"helmDefaults"`
			Releases []struct {
				Name            string `yaml:"name"`
				Namespace       string `yaml:"namespace"`
				Chart           string `yaml:"chart"`
				Installed       *bool  `yaml:"installed"`
				CreateNamespace *bool  `yaml:"createNamespace"`
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
			if r.Installed != nil && !*r.Installed {
				continue
			}
			rel := Release{File: file, Chart: r.Name}
			if r.Chart != "" && !strings.Contains(r.Chart, "{{") {
				rel.Chart = path.Base(strings.TrimSuffix(r.Chart, "/"))
			}
			create := r.CreateNamespace
			if create == nil {
				create = doc.HelmDefaults.CreateNamespace
			}
			if (create == nil || *create) && !strings.Contains(r.Namespace, "{{") {
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
