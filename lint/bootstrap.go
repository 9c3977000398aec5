package lint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
)

// WithExistingWebhooks declares admission webhooks that serve before Flux
// applies anything (an operator a bootstrap step installs first): each an
// API group (every resource of it) or GROUP/RESOURCE. No layer needs to
// wait for them.
func WithExistingWebhooks(entries ...string) Option {
	return funcLint(func(c *config) error {
		for _, e := range entries {
			group, res, cut := strings.Cut(e, "/")
			if group == "" || cut && (res == "" || strings.Contains(res, "/")) {
				return errdefs.Kind(ErrInvalidOption, "existing webhook %q: want GROUP or GROUP/RESOURCE", e)
			}
			if !cut {
				res = "*"
			}
			if c.existingWebhooks == nil {
				c.existingWebhooks = map[string]bool{}
			}
			c.existingWebhooks[webhookKey(group, res)] = true
		}
		return nil
	})
}

// WithHelmfile reads helmfiles that install releases before Flux (a
// bootstrap step: `helmfile sync`, then Flux): the CRDs of every release's
// chart, and its admission webhooks, exist before any layer, as far as the
// table of known operators (KnownOperators, WithOperators) knows the chart.
// A helmfile whose helmDefaults.args hold --include-crds only renders its
// releases' CRDs (templated and applied with kubectl, the common way to
// install CRDs first): their webhooks do not serve. A release is known by
// its chart's last path element (repo/chart, oci://host/charts/chart), or
// by its name when the chart is templated. Report.Bootstrap lists what lint
// took from them.
func WithHelmfile(files ...string) Option {
	return funcLint(func(c *config) error {
		for _, f := range files {
			releases, crdsOnly, err := readHelmfile(f)
			if err != nil {
				return errdefs.Kind(ErrInvalidOption, "helmfile %s: %v", f, err)
			}
			for _, r := range releases {
				c.bootstrap = append(c.bootstrap, bootstrapRelease{file: f, chart: r, crdsOnly: crdsOnly})
			}
		}
		return nil
	})
}

type bootstrapRelease struct {
	file     string
	chart    string
	crdsOnly bool
}

// readHelmfile returns the chart names of a helmfile's releases, and
// whether it only renders their CRDs. Documents with Go templates in
// their structure are read as far as YAML allows; a templated chart falls
// back on the release's name.
func readHelmfile(file string) (charts []string, crdsOnly bool, err error) {
	data, err := inputfile.Read(file)
	if err != nil {
		return nil, false, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc struct {
			HelmDefaults struct {
				Args []string `yaml:"args"`
			} `yaml:"helmDefaults"`
			Releases []struct {
				Name      string `yaml:"name"`
				Chart     string `yaml:"chart"`
				Installed *bool  `yaml:"installed"`
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
			chart := r.Name
			if r.Chart != "" && !strings.Contains(r.Chart, "{{") {
				chart = path.Base(strings.TrimSuffix(r.Chart, "/"))
			}
			if chart != "" {
				charts = append(charts, chart)
			}
		}
	}
	return charts, crdsOnly, nil
}

// applyBootstrap adds what the helmfiles' releases bring before Flux to
// the existing API groups and webhooks, and says what it took.
func (l *linter) applyBootstrap() {
	for _, r := range l.cfg.bootstrap {
		entries, ok := l.cfg.operators[r.chart]
		if !ok {
			entries, ok = KnownOperators()[r.chart]
		}
		if !ok {
			l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: release %s: a chart fluxpack's table of known operators does not know (declare what it brings with --existing-api-group, --existing-webhook)", r.file, r.chart))
			continue
		}
		var groups []string
		for _, e := range entries {
			group, res, cut := strings.Cut(e, "/")
			if !cut {
				res = "*"
			}
			if !slices.Contains(groups, group) {
				groups = append(groups, group)
				l.cfg.existingGroups = append(l.cfg.existingGroups, group)
			}
			if !r.crdsOnly {
				if l.cfg.existingWebhooks == nil {
					l.cfg.existingWebhooks = map[string]bool{}
				}
				l.cfg.existingWebhooks[webhookKey(group, res)] = true
			}
		}
		what := "CRDs and webhooks"
		if r.crdsOnly {
			what = "CRDs"
		}
		l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: release %s: %s of %s exist before Flux", r.file, r.chart, what, strings.Join(groups, ", ")))
	}
}

// FindHelmfiles returns the helmfiles of a repository's bootstrap step,
// where people keep them: helmfile.yaml at root, bootstrap/helmfile.yaml,
// and the YAML files of bootstrap/helmfile/ that have releases.
func FindHelmfiles(root string) []string {
	var out []string
	for _, f := range []string{"helmfile.yaml", "bootstrap/helmfile.yaml"} {
		if _, err := os.Stat(path.Join(root, f)); err == nil {
			out = append(out, path.Join(root, f))
		}
	}
	entries, _ := os.ReadDir(path.Join(root, "bootstrap", "helmfile"))
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		f := path.Join(root, "bootstrap", "helmfile", e.Name())
		if charts, _, err := readHelmfile(f); err == nil && len(charts) > 0 {
			out = append(out, f)
		}
	}
	return out
}
