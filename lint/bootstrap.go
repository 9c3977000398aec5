package lint

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/layering"
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
// table of known operators (KnownOperators, WithOperators) knows the chart;
// and so does every release's namespace, which helmfile creates unless
// createNamespace is false.
// A helmfile whose helmDefaults.args hold --include-crds only renders its
// releases' CRDs (templated and applied with kubectl, the common way to
// install CRDs first): their webhooks do not serve. A release is known by
// its chart's last path element (repo/chart, oci://host/charts/chart), or
// by its name when the chart is templated. Report.Bootstrap lists what lint
// took from them.
func WithHelmfile(files ...string) Option {
	return funcLint(func(c *config) error {
		for _, f := range files {
			releases, crdsOnly, err := bootstrap.ReadHelmfile(f)
			if err != nil {
				return errdefs.Kind(ErrInvalidOption, "helmfile %s: %v", f, err)
			}
			for _, r := range releases {
				r.CRDsOnly = crdsOnly
				c.bootstrap = append(c.bootstrap, r)
			}
		}
		return nil
	})
}

// WithBootstrapKustomization reads folders a bootstrap step applies
// before Flux (`kustomize build DIR | kubectl apply -f -`, or `kubectl
// apply -k DIR`): every object they build exists before any layer, as an
// external object does (WithExternal); their Namespaces and the groups of
// their CRDs too. A folder that does not build is said in
// Report.Bootstrap, and counts for nothing.
func WithBootstrapKustomization(dirs ...string) Option {
	return funcLint(errdefs.NoneEmpty("WithBootstrapKustomization", "folder", dirs, func(c *config) *[]string { return &c.bootstrapDirs }))
}

// WithBootstrapManifests reads files a bootstrap step applies with
// kubectl before Flux (`kubectl apply -f FILE`, or `sops --decrypt FILE |
// kubectl apply -f -`; FindBootstrapManifests finds them in the bootstrap
// scripts): every object in them exists before any layer, as an external
// object does (WithExternal; one without a namespace, which kubectl puts
// in its context's, in any namespace); their Namespaces and the groups of
// their CRDs too. A file encrypted with SOPS is read for what SOPS leaves
// in clear: its keys, and the values its encrypted_regex leaves alone
// (kind and metadata with the usual ^(data|stringData)$). An object whose
// kind or name is encrypted (SOPS's default) counts for nothing, and
// Report.Bootstrap says so, as it does for a file that is not manifests.
func WithBootstrapManifests(files ...string) Option {
	return funcLint(errdefs.NoneEmpty("WithBootstrapManifests", "file", files, func(c *config) *[]string { return &c.bootstrapManifests }))
}

// WithFilteredBootstrapManifest reads a file a bootstrap step pipes
// through programs lint does not run before kubectl applies it
// (bootstrap.Manifest.Through: `just template FILE | python3 -c '…' |
// kubectl apply -f -`), as WithBootstrapManifests reads a file: its
// objects are taken as the file has them, and Report.Bootstrap and
// Report.Summary say through which programs.
func WithFilteredBootstrapManifest(file string, programs ...string) Option {
	return funcLint(func(c *config) error {
		if file == "" {
			return errdefs.InvalidOption("WithFilteredBootstrapManifest: empty file")
		}
		if len(programs) == 0 || slices.Contains(programs, "") {
			return errdefs.InvalidOption("WithFilteredBootstrapManifest: file %s: no program named", file)
		}
		c.bootstrapManifests = append(c.bootstrapManifests, file)
		if c.bootstrapThrough == nil {
			c.bootstrapThrough = map[string][]string{}
		}
		c.bootstrapThrough[file] = slices.Clone(programs)
		return nil
	})
}

// WithBootstrapNamespaces declares namespaces a bootstrap step creates
// before Flux (`kubectl create namespace NAME`; FindBootstrapNamespaces
// finds them in the bootstrap scripts). Unlike WithExistingNamespaces,
// Report.Bootstrap lists them.
func WithBootstrapNamespaces(names ...string) Option {
	return funcLint(errdefs.NoneEmpty("WithBootstrapNamespaces", "namespace", names, func(c *config) *[]string { return &c.bootstrapNamespaces }))
}

// applyBootstrapDirs builds the WithBootstrapKustomization folders and
// takes their objects as existing before Flux.
func (l *linter) applyBootstrapDirs(ctx context.Context) {
	for _, dir := range l.cfg.bootstrapDirs {
		name := l.rel(absPath(dir))
		objs, err := l.cfg.objects.build(absPath(dir), func() ([]*fluxbuild.Object, error) {
			return fluxbuild.Build(ctx, fluxbuild.Source{Dir: dir}, &kustomizev1.Kustomization{
				ObjectMeta: metav1.ObjectMeta{Name: "bootstrap", Namespace: "flux-system"},
				Spec:       kustomizev1.KustomizationSpec{Path: "."},
			})
		})
		if err != nil {
			l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: a bootstrap kustomization that does not build, so none of its objects count: %v", name, err))
			continue
		}
		refs := l.existBeforeFlux(objs)
		l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: a bootstrap kustomization: %d object%s exist%s before Flux (%s)", name, len(objs), plural(len(objs), "", "s"), plural(len(objs), "s", ""), strings.Join(refs, ", ")))
	}
}

// applyBootstrapManifests reads the WithBootstrapManifests files and takes
// their objects as existing before Flux.
func (l *linter) applyBootstrapManifests() {
	for _, file := range l.cfg.bootstrapManifests {
		name := l.rel(absPath(file))
		objs, err := readBootstrapManifests(file, name)
		if err != nil {
			l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: a file a bootstrap script applies with kubectl, which lint cannot read as manifests, so none of its objects count: %v", name, err))
			continue
		}
		var clear []*fluxbuild.Object
		var hidden, templated int
		for _, o := range objs {
			switch id := o.APIVersion + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name; {
			case strings.Contains(id, "ENC["):
				hidden++
			case strings.Contains(id, bootstrap.TemplateMark):
				templated++
			default:
				clear = append(clear, o)
			}
		}
		refs := l.existBeforeFlux(clear)
		how := "a file a bootstrap script applies with kubectl"
		if through := l.cfg.bootstrapThrough[file]; len(through) > 0 {
			how += fmt.Sprintf(" through %s, which lint does not run and takes to pass on each object as the file has it", strings.Join(through, " and "))
			l.through = append(l.through, through...)
		}
		line := fmt.Sprintf("%s: %s: %d object%s exist%s before Flux (%s)", name, how, len(clear), plural(len(clear), "", "s"), plural(len(clear), "s", ""), strings.Join(refs, ", "))
		if hidden > 0 {
			line += fmt.Sprintf("; %d more, whose kind or name SOPS encrypts, count%s for nothing (encrypt only data and stringData, encrypted_regex: ^(data|stringData)$, to have them counted)", hidden, plural(hidden, "s", ""))
		}
		if templated > 0 {
			line += fmt.Sprintf("; %d more, whose kind or name a template expression makes, count%s for nothing", templated, plural(templated, "s", ""))
		}
		l.bootstrap = append(l.bootstrap, line)
	}
}

// readBootstrapManifests reads a file a bootstrap script applies: a
// template (.j2, rendered by minijinja-cli or a just recipe) as
// bootstrap.ExpandTemplate makes it, another file as kustomize reads it.
func readBootstrapManifests(file, name string) ([]*fluxbuild.Object, error) {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".j2", ".jinja", ".jinja2":
		data, err := inputfile.ReadManifest(file)
		if err != nil {
			return nil, err
		}
		return fluxbuild.ReadData([]byte(bootstrap.ExpandTemplate(string(data))), name)
	}
	return fluxbuild.ReadFile(file, name)
}

// existBeforeFlux takes objects a bootstrap step applies as existing
// before Flux, as external objects, and their Namespaces and CRDs' groups
// as existing; it returns how findings name them.
func (l *linter) existBeforeFlux(objs []*fluxbuild.Object) []string {
	var refs []string
	for _, o := range objs {
		ref := layering.ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
		l.cfg.external = append(l.cfg.external, ref)
		refs = append(refs, ref.String())
		switch {
		case o.Kind == "Namespace" && o.APIVersion == "v1":
			l.cfg.existingNamespaces = append(l.cfg.existingNamespaces, o.Name)
		case o.Kind == "CustomResourceDefinition":
			if g := yamlutil.Str(o.Node, "spec", "group"); g != "" {
				l.cfg.existingGroups = append(l.cfg.existingGroups, g)
			}
		}
	}
	return refs
}

// applyBootstrap adds what the bootstrap step brings before Flux (the
// namespaces its scripts create, and its helmfiles' releases: their
// namespaces, API groups and webhooks) to what exists, and says what it
// took.
func (l *linter) applyBootstrap() {
	for _, ns := range l.cfg.bootstrapNamespaces {
		if !slices.Contains(l.cfg.existingNamespaces, ns) {
			l.cfg.existingNamespaces = append(l.cfg.existingNamespaces, ns)
		}
		l.bootstrap = append(l.bootstrap, fmt.Sprintf("namespace %s: a bootstrap script creates it before Flux", ns))
	}
	for _, r := range l.cfg.bootstrap {
		if r.Namespace != "" && !slices.Contains(l.cfg.existingNamespaces, r.Namespace) {
			l.cfg.existingNamespaces = append(l.cfg.existingNamespaces, r.Namespace)
			l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: release %s: helmfile creates its namespace %s before Flux", r.File, r.Chart, r.Namespace))
		}
		entries, ok := l.cfg.operators[r.Chart]
		if !ok {
			entries, ok = KnownOperators()[r.Chart]
		}
		if !ok {
			l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: release %s: a chart fluxpack's table of known operators does not know (declare what it brings with --existing-api-group, --existing-webhook)", r.File, r.Chart))
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
			if !r.CRDsOnly {
				if l.cfg.existingWebhooks == nil {
					l.cfg.existingWebhooks = map[string]bool{}
				}
				l.cfg.existingWebhooks[webhookKey(group, res)] = true
			}
		}
		what := "CRDs and webhooks"
		if r.CRDsOnly {
			what = "CRDs"
		}
		l.bootstrap = append(l.bootstrap, fmt.Sprintf("%s: release %s: %s of %s exist before Flux", r.File, r.Chart, what, strings.Join(groups, ", ")))
	}
}

// unrun is Report.Unrun: the programs bootstrap files came through, once
// each, in the order met.
func (l *linter) unrun() []string {
	var out []string
	for _, p := range l.through {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
