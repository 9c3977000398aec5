package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
)

// ConfigFile is the name lint looks for at a repository's root (or beside
// a stack file) when no configuration is given.
const ConfigFile = ".fluxpack.yaml"

// Config is a repository's lint configuration (ConfigFile): what exists
// before Flux, where charts are, and which findings are accepted, each with
// its reason. Every piece of advice a finding gives can be said here or with
// a flag.
//
//	apiVersion: fluxpack.dev/v1alpha1
//	kind: LintConfig
//	spec:
//	  external: [ConfigMap/flux-system/cluster-vars]
//	  existing:
//	    namespaces: [kube-system-extra]
//	    apiGroups: [cilium.io]
//	    webhooks: [cert-manager.io]
//	  helmfiles: [bootstrap/helmfile/apps.yaml]
//	  bootstrapKustomizations: [bootstrap/kustomize/cluster]
//	  charts: [charts]
//	  operators: {my-operator: [example.com]}
//	  rules: {merge: off, health-check: warning}
//	  suppress:
//	    - rule: namespace-order
//	      layer: flux-sources
//	      reason: the sources' namespaces come from Terraform
//	      expires: 2027-01-31
type Config struct {
	// Dir is where the file's relative paths start: its folder.
	Dir string `yaml:"-"`

	External []string `yaml:"external,omitempty"`
	Existing struct {
		Namespaces []string `yaml:"namespaces,omitempty"`
		APIGroups  []string `yaml:"apiGroups,omitempty"`
		Webhooks   []string `yaml:"webhooks,omitempty"`
	} `yaml:"existing,omitempty"`
	Helmfiles []string `yaml:"helmfiles,omitempty"`
	// BootstrapKustomizations are folders a bootstrap step applies with
	// kustomize before Flux (WithBootstrapKustomization).
	BootstrapKustomizations []string            `yaml:"bootstrapKustomizations,omitempty"`
	Charts                  []string            `yaml:"charts,omitempty"`
	Operators               map[string][]string `yaml:"operators,omitempty"`
	// NoCrossNamespaceRefs says the controllers run with
	// --no-cross-namespace-refs (WithNoCrossNamespaceRefs).
	NoCrossNamespaceRefs bool `yaml:"noCrossNamespaceRefs,omitempty"`
	// NoRemoteBases says kustomize-controller runs with --no-remote-bases
	// (WithNoRemoteBases).
	NoRemoteBases bool `yaml:"noRemoteBases,omitempty"`
	// Rules sets a rule's severity: error, warning, hint, or off.
	Rules    map[Rule]string `yaml:"rules,omitempty"`
	Suppress []Suppression   `yaml:"suppress,omitempty"`
}

// Suppression accepts the findings of Rule (on Layer and Object, when
// given) for Reason, until Expires (YYYY-MM-DD, optional): after that day
// they fail lint again.
type Suppression struct {
	Rule    Rule   `yaml:"rule" json:"rule"`
	Layer   string `yaml:"layer,omitempty" json:"layer,omitempty"`
	Object  string `yaml:"object,omitempty" json:"object,omitempty"`
	Reason  string `yaml:"reason" json:"reason"`
	Expires string `yaml:"expires,omitempty" json:"expires,omitempty"`

	line int
}

// Suppressed is a finding a Suppression accepted.
type Suppressed struct {
	Finding
	Reason  string `json:"reason"`
	Expires string `json:"expires,omitempty"`
}

// LoadConfig reads a lint configuration file. An unknown field, a rule
// lint does not have, a suppression without a reason or with a bad date is
// an error naming file:line, wrapping ErrInvalidOption.
func LoadConfig(path string) (*Config, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		APIVersion string    `yaml:"apiVersion"`
		Kind       string    `yaml:"kind"`
		Spec       yaml.Node `yaml:"spec"`
	}
	fail := func(line int, format string, args ...any) error {
		return errdefs.Kind(ErrInvalidOption, "%s", (&errdefs.FileError{Path: path, Line: line, Err: fmt.Errorf(format, args...)}).Error())
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fail(yamlutil.ErrorLineIn(data, err), "%v", yamlutil.WithoutLine(err))
	}
	if doc.APIVersion != "fluxpack.dev/v1alpha1" || doc.Kind != "LintConfig" {
		return nil, fail(1, "want apiVersion fluxpack.dev/v1alpha1, kind LintConfig; got %q, %q", doc.APIVersion, doc.Kind)
	}
	c := &Config{Dir: filepath.Dir(path)}
	if doc.Spec.Kind != 0 {
		var spec bytes.Buffer
		enc := yaml.NewEncoder(&spec)
		if err := enc.Encode(&doc.Spec); err != nil {
			return nil, fail(doc.Spec.Line, "%v", err)
		}
		sdec := yaml.NewDecoder(&spec)
		sdec.KnownFields(true)
		if err := sdec.Decode(c); err != nil {
			// Lines of the re-encoded spec: point at the spec.
			return nil, fail(doc.Spec.Line, "spec: %v", err)
		}
		for i := range c.Suppress {
			c.Suppress[i].line = suppressionLine(&doc.Spec, i)
		}
	}
	for r, sev := range c.Rules {
		if !slices.Contains(Rules(), r) {
			return nil, fail(doc.Spec.Line, "rules: unknown rule %q (rules: %s)", r, ruleList())
		}
		if !slices.Contains([]string{"error", "warning", "hint", "off"}, sev) {
			return nil, fail(doc.Spec.Line, "rules: %s: want error, warning, hint or off, not %q", r, sev)
		}
	}
	for _, s := range c.Suppress {
		switch {
		case !slices.Contains(Rules(), s.Rule):
			return nil, fail(s.line, "suppress: unknown rule %q (rules: %s)", s.Rule, ruleList())
		case strings.TrimSpace(s.Reason) == "":
			return nil, fail(s.line, "suppress %s: a reason is required", s.Rule)
		case s.Expires != "":
			if _, err := time.Parse(time.DateOnly, s.Expires); err != nil {
				return nil, fail(s.line, "suppress %s: expires %q: want YYYY-MM-DD", s.Rule, s.Expires)
			}
		}
	}
	return c, nil
}

func suppressionLine(spec *yaml.Node, i int) int {
	for k := 0; k+1 < len(spec.Content); k += 2 {
		if spec.Content[k].Value == "suppress" && i < len(spec.Content[k+1].Content) {
			return spec.Content[k+1].Content[i].Line
		}
	}
	return spec.Line
}

func ruleList() string {
	var out []string
	for _, r := range Rules() {
		out = append(out, string(r))
	}
	return strings.Join(out, ", ")
}

// Options turns the configuration into lint options, its relative paths
// taken from Dir.
func (c *Config) Options() ([]Option, error) {
	var opts []Option
	abs := func(paths []string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = p
			if !filepath.IsAbs(p) {
				out[i] = filepath.Join(c.Dir, filepath.FromSlash(p))
			}
		}
		return out
	}
	if len(c.External) > 0 {
		var refs []layering.ObjectRef
		for _, e := range c.External {
			r, err := layering.ParseObjectRef(e)
			if err != nil {
				return nil, fmt.Errorf("external: %w", err)
			}
			refs = append(refs, r)
		}
		opts = append(opts, WithExternal(refs...))
	}
	if len(c.Existing.Namespaces) > 0 {
		opts = append(opts, WithExistingNamespaces(c.Existing.Namespaces...))
	}
	if len(c.Existing.APIGroups) > 0 {
		opts = append(opts, WithExistingAPIGroups(c.Existing.APIGroups...))
	}
	if len(c.Existing.Webhooks) > 0 {
		opts = append(opts, WithExistingWebhooks(c.Existing.Webhooks...))
	}
	if len(c.Helmfiles) > 0 {
		opts = append(opts, WithHelmfile(abs(c.Helmfiles)...))
	}
	if len(c.BootstrapKustomizations) > 0 {
		opts = append(opts, WithBootstrapKustomization(abs(c.BootstrapKustomizations)...))
	}
	if len(c.Charts) > 0 {
		opts = append(opts, WithCharts(abs(c.Charts)...))
	}
	if len(c.Operators) > 0 {
		opts = append(opts, WithOperators(c.Operators))
	}
	if c.NoCrossNamespaceRefs {
		opts = append(opts, WithNoCrossNamespaceRefs())
	}
	if c.NoRemoteBases {
		opts = append(opts, WithNoRemoteBases())
	}
	opts = append(opts, funcLint(func(cfg *config) error {
		cfg.severities = c.Rules
		cfg.suppress = append(cfg.suppress, c.Suppress...)
		return nil
	}))
	return opts, nil
}

// judge applies the configured severities and suppressions to the
// findings: off drops a rule's findings, a severity replaces theirs, and a
// suppression that has not expired moves a finding to Report.Suppressed.
func (l *linter) judge(findings []Finding, today time.Time) (kept []Finding, suppressed []Suppressed) {
	for _, f := range findings {
		if sev, ok := l.cfg.severities[f.Rule]; ok {
			if sev == "off" {
				continue
			}
			f.Severity = Severity(sev)
		}
		i := slices.IndexFunc(l.cfg.suppress, func(s Suppression) bool {
			return s.Rule == f.Rule && (s.Layer == "" || s.Layer == f.Layer) && (s.Object == "" || s.Object == f.Object)
		})
		if i >= 0 {
			s := l.cfg.suppress[i]
			expired := false
			if s.Expires != "" {
				day, _ := time.Parse(time.DateOnly, s.Expires)
				expired = !today.Before(day.AddDate(0, 0, 1))
			}
			if !expired {
				suppressed = append(suppressed, Suppressed{Finding: f, Reason: s.Reason, Expires: s.Expires})
				continue
			}
			f.Message += fmt.Sprintf(" (a suppression of %s expired on %s: %s)", s.Rule, s.Expires, s.Reason)
		}
		kept = append(kept, f)
	}
	return kept, suppressed
}
