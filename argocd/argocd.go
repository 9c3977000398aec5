package argocd

import (
	"cmp"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"go.yaml.in/yaml/v3"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/stackpath"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

// WaveAnnotation orders Argo CD's sync: lower waves first, each one
// healthy before the next starts.
const WaveAnnotation = "argocd.argoproj.io/sync-wave"

// FileError is a problem at one line of a file: the type every fluxpack
// package returns.
type FileError = errdefs.FileError

// Imported is an app-of-apps as a stack file.
type Imported struct {
	// Stack is the stack file (fluxpack.dev/v1alpha1 Stack).
	Stack []byte
	// Differences are what Flux, or the stack, cannot say as the
	// Applications do, one line each naming the Application and its
	// file:line: none is dropped silently.
	Differences []string
}

// application is what the import reads of an Argo CD Application.
type application struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Source      *source  `json:"source"`
		Sources     []source `json:"sources"`
		Destination struct {
			Server    string `json:"server"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"destination"`
		SyncPolicy *struct {
			Automated *struct {
				Prune bool `json:"prune"`
			} `json:"automated"`
			SyncOptions []string `json:"syncOptions"`
		} `json:"syncPolicy"`
	} `json:"spec"`

	file string
	line int
	wave int
}

type source struct {
	RepoURL        string `json:"repoURL"`
	Path           string `json:"path"`
	TargetRevision string `json:"targetRevision"`
	Chart          string `json:"chart"`
	Ref            string `json:"ref"`
	Helm           *struct {
		ReleaseName  string         `json:"releaseName"`
		Values       string         `json:"values"`
		ValuesObject map[string]any `json:"valuesObject"`
		ValueFiles   []string       `json:"valueFiles"`
		Parameters   []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"parameters"`
	} `json:"helm"`
	Kustomize map[string]any `json:"kustomize"`
	Directory map[string]any `json:"directory"`
}

// Import reads the Argo CD Applications of an app-of-apps under dir (every
// YAML file, recursively; ApplicationSets with a list generator are
// expanded) and writes the same bootstrap as a stack file: one layer per
// Application, each waiting (wait: true, as Argo CD waits for a wave to be
// healthy) for every Application of the wave before it, so that seed 004's
// waves (-2: external-dns and external-secrets, -1: ingress, then the rest)
// become layers. A chart becomes a HelmRelease layer (chart, version,
// releaseName, values, valuesObject and parameters merged in Argo CD's
// order, CreateNamespace); a path in a Git repository becomes a
// Kustomization layer reading the repository (GitRepository flux-system) at
// that path. An Application whose path is dir itself is the app of apps:
// the stack's own root replaces it. What Flux cannot express is listed in
// Differences. The layers' paths are relative to the repository's root,
// or with WithStackFile to the stack file's folder.
func Import(dir string, opts ...Option) (*Imported, error) {
	cfg := &config{}
	if err := errdefs.ApplyOptions(cfg, opts, Option.applyToImport, "nil Option"); err != nil {
		return nil, err
	}
	apps, diffs, err := readApplications(dir)
	if err != nil {
		return nil, err
	}
	out := &Imported{Differences: diffs}
	stackDir, diff, err := cfg.stackDir(dir)
	if err != nil {
		return nil, fmt.Errorf("importing the Applications of %s: %w", dir, err)
	}
	if diff != "" {
		out.Differences = append(out.Differences, diff)
	}
	differ := func(a *application, format string, args ...any) {
		out.Differences = append(out.Differences, fmt.Sprintf("%s:%d: Application/%s: %s", a.file, a.line, a.Metadata.Name, fmt.Sprintf(format, args...)))
	}
	var kept []*application
	base := path.Base(filepath.ToSlash(filepath.Clean(dir)))
	appsIn := func(p string) bool { // is there an Application in dir/p?
		prefix := filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(p))) + "/"
		return slices.ContainsFunc(apps, func(a *application) bool { return strings.HasPrefix(a.file, prefix) })
	}
	for _, a := range apps {
		if s := a.Spec.Source; s != nil && s.Chart == "" && (path.Base(path.Clean(s.Path)) == base || appsIn(s.Path)) {
			differ(a, "the app of apps (it applies %s): the stack's root Kustomization applies the layers instead", s.Path)
			continue
		}
		kept = append(kept, a)
	}
	slices.SortStableFunc(kept, func(x, y *application) int { return cmp.Compare(x.wave, y.wave) })

	repoURL := mainRepo(kept)
	b := layering.New(stackName(base), layering.FromSource(kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"}))
	helmRepos := map[string]string{}
	var prevWave, thisWave []string
	current := 0
	for i, a := range kept {
		if i == 0 || a.wave != current {
			prevWave, thisWave, current = thisWave, nil, a.wave
		}
		opts := []layering.StepOption{layering.DependsOn(prevWave...)}
		s := a.Spec.Source
		if s == nil {
			if len(a.Spec.Sources) == 0 {
				differ(a, "no source: left out")
				continue
			}
			differ(a, "has %d sources; Flux takes one source per Kustomization or HelmRelease: only the first is imported", len(a.Spec.Sources))
			s = &a.Spec.Sources[0]
		}
		ns := a.Spec.Destination.Namespace
		if d := a.Spec.Destination; d.Server != "" && d.Server != "https://kubernetes.default.svc" || d.Name != "" && d.Name != "in-cluster" {
			differ(a, "its destination is another cluster (%s%s): Flux applies to its own cluster (spec.kubeConfig is not in the stack model)", d.Server, d.Name)
		}
		createNS := false
		if sp := a.Spec.SyncPolicy; sp != nil {
			if sp.Automated == nil {
				differ(a, "it syncs by hand (no syncPolicy.automated); Flux reconciles on its interval")
			}
			for _, o := range sp.SyncOptions {
				switch o {
				case "CreateNamespace=true":
					createNS = true
				case "ServerSideApply=true", "Validate=true":
					// Flux always applies server-side, with validation.
				default:
					differ(a, "sync option %s has no Flux equivalent: left out", o)
				}
			}
			if sp.Automated != nil && !sp.Automated.Prune {
				opts = append(opts, layering.NoPrune())
			}
		}
		if s.Chart != "" {
			h, d := helmRelease(s, ns, createNS, helmRepos)
			for _, x := range d {
				differ(a, "%s", x)
			}
			opts = append(opts, layering.HelmRelease(h...))
		} else {
			if s.RepoURL != repoURL {
				name := repoName(s.RepoURL)
				opts = append(opts, layering.SourceRef(kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: name}))
				differ(a, "its repository %s is not the app of apps' one: the layer reads GitRepository/%s, which you create", s.RepoURL, name)
			}
			p := "./" + strings.TrimPrefix(path.Clean(s.Path), "./")
			if s.RepoURL == repoURL {
				p = stackpath.FromDir(stackDir, p) // the app of apps' repository: the stack's own
			}
			opts = append(opts, layering.Path(p))
			if ns != "" {
				differ(a, "destination.namespace %s: Argo CD puts objects without a namespace there; Flux's targetNamespace would also move the others, so it is not set: give those objects their namespace", ns)
			}
			if createNS {
				differ(a, "CreateNamespace=true: a Kustomization does not create namespaces; add a Namespace %s to a layer it depends on", ns)
			}
			if s.Kustomize != nil || s.Directory != nil {
				differ(a, "source.kustomize/directory options are not imported: put them in a kustomization.yaml of %s", s.Path)
			}
		}
		if s.TargetRevision != "" && s.Chart == "" && s.TargetRevision != "HEAD" && s.TargetRevision != "main" && s.TargetRevision != "master" {
			differ(a, "targetRevision %s: the layer reads whatever revision the stack's GitRepository tracks", s.TargetRevision)
		}
		b.Layer(a.Metadata.Name, opts...)
		thisWave = append(thisWave, a.Metadata.Name)
	}
	for _, url := range slices.Sorted(mapsKeys(helmRepos)) {
		out.Differences = append(out.Differences, fmt.Sprintf("charts come from %s: create HelmRepository/flux-system/%s for it (the stack's HelmReleases name it)", url, helmRepos[url]))
	}
	if _, err := b.Build(); err != nil {
		return nil, fmt.Errorf("importing the Applications of %s: %w", dir, err)
	}
	if out.Stack, err = stackfile.Marshal(b); err != nil {
		return nil, err
	}
	return out, nil
}

// stackDir is the folder of WithStackFile's file relative to the
// repository's root ("." without it), and the Difference to list when the
// paths cannot be relative to it.
func (c *config) stackDir(dir string) (string, string, error) {
	if c.stackFile == "" {
		return ".", "", nil
	}
	root := c.root
	if root == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", "", err
		}
		var ok bool
		if root, ok = stackpath.Root(abs); !ok {
			return ".", fmt.Sprintf("no Git checkout holds %s, so the repository's root is unknown: the layers' paths are relative to it (as the Applications' paths are), not to the stack file %s; give the root (--root) for paths the stack renders with where it is written", dir, c.stackFile), nil
		}
	}
	rel, inside, err := stackpath.Dir(root, c.stackFile)
	if err != nil {
		return "", "", err
	}
	if !inside {
		return ".", fmt.Sprintf("the stack file %s is written outside the repository %s: its layers' paths are relative to the repository's root, so it renders from there, not from where it is written", c.stackFile, root), nil
	}
	return rel, "", nil
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// helmRelease is a chart source as a HelmRelease layer's options, and what
// cannot be carried.
func helmRelease(s *source, ns string, createNS bool, repos map[string]string) ([]layering.HelmOption, []string) {
	var opts []layering.HelmOption
	var diffs []string
	if strings.Contains(s.RepoURL, "://") {
		name, ok := repos[s.RepoURL]
		if !ok {
			name = repoName(s.RepoURL)
			repos[s.RepoURL] = name
		}
		opts = append(opts, layering.Chart(helmv2.HelmChartTemplateSpec{Chart: s.Chart, Version: s.TargetRevision, SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: name}}))
	} else {
		name := repoName(s.Chart)
		opts = append(opts, layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: name}))
		diffs = append(diffs, fmt.Sprintf("the chart is in the OCI registry %s: create OCIRepository/flux-system/%s (url oci://%s/%s, tag %s, layerSelector for the Helm chart) for it", s.RepoURL, name, s.RepoURL, s.Chart, s.TargetRevision))
	}
	if ns != "" {
		opts = append(opts, layering.ReleaseNamespace(ns))
	}
	if createNS {
		opts = append(opts, layering.CreateNamespace())
	}
	values := map[string]any{}
	if h := s.Helm; h != nil {
		if h.ReleaseName != "" {
			opts = append(opts, layering.ReleaseName(h.ReleaseName))
		}
		for _, f := range h.ValueFiles {
			diffs = append(diffs, fmt.Sprintf("valueFiles %s: a HelmRelease takes values from ConfigMaps and Secrets (valuesFrom), not from files of the chart's repository: put them in a ConfigMap", f))
		}
		// Argo CD's order: values, then valuesObject over them, then
		// parameters over both.
		if h.Values != "" {
			var v map[string]any
			if err := sigyaml.Unmarshal([]byte(h.Values), &v); err != nil {
				diffs = append(diffs, fmt.Sprintf("helm.values are not a YAML map (%v): left out", err))
			} else {
				merge(values, v)
			}
		}
		merge(values, h.ValuesObject)
		for _, p := range h.Parameters {
			setPath(values, p.Name, typed(p.Value))
		}
	}
	if len(values) > 0 {
		opts = append(opts, layering.Values(values))
	}
	return opts, diffs
}

// merge merges src into dst, maps key by key, src winning.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// setPath sets a Helm --set path (a.b.c, \. for a dot in a key).
func setPath(m map[string]any, p string, v any) {
	var keys []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			cur.WriteByte(p[i])
		case p[i] == '.':
			keys = append(keys, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(p[i])
		}
	}
	keys = append(keys, cur.String())
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}

// typed reads a --set value as Helm does: booleans and integers typed.
func typed(s string) any {
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

// mainRepo is the Git repository most Applications read (the app of apps').
func mainRepo(apps []*application) string {
	count := map[string]int{}
	best := ""
	for _, a := range apps {
		if s := a.Spec.Source; s != nil && s.Chart == "" {
			count[s.RepoURL]++
			if count[s.RepoURL] > count[best] {
				best = s.RepoURL
			}
		}
	}
	return best
}

// repoName makes a Flux object name of a repository URL or chart name.
func repoName(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		s = u.Host + u.Path
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
	if i := strings.LastIndex(s, "/"); i >= 0 && i < len(s)-1 {
		last := s[i+1:]
		if last != "charts" && last != "helm-charts" {
			s = last
		} else if host, _, ok := strings.Cut(s, "/"); ok {
			s = host
		}
	}
	return stackName(strings.TrimPrefix(s, "www."))
}

// stackName makes a DNS-1123 label of s.
func stackName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		out = strings.Trim(out[:63], "-")
	}
	if out == "" {
		return "apps"
	}
	return out
}

// readApplications reads every Application (and list ApplicationSet)
// under dir, in file order.
func readApplications(dir string) ([]*application, []string, error) {
	var apps []*application
	var diffs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		objs, err := fluxbuild.ReadFile(p, filepath.ToSlash(p))
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.Group() != "argoproj.io" {
				continue
			}
			switch o.Kind {
			case "Application":
				a, err := decodeApp(o.Node, o.File, o.Line)
				if err != nil {
					return err
				}
				apps = append(apps, a)
			case "ApplicationSet":
				got, d, err := expandSet(o)
				if err != nil {
					return err
				}
				apps, diffs = append(apps, got...), append(diffs, d...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Applications of %s: %w", dir, err)
	}
	if len(apps) == 0 {
		return nil, nil, fmt.Errorf("reading the Applications of %s: none found (argoproj.io/v1alpha1 Application or ApplicationSet)", dir)
	}
	return apps, diffs, nil
}

func decodeApp(n *yaml.Node, file string, line int) (*application, error) {
	data, err := yaml.Marshal(n)
	if err != nil {
		return nil, err
	}
	a := &application{file: file, line: line}
	if err := sigyaml.Unmarshal(data, a); err != nil {
		return nil, &FileError{Path: file, Line: line, Err: err}
	}
	if w, ok := a.Metadata.Annotations[WaveAnnotation]; ok {
		if a.wave, err = strconv.Atoi(strings.TrimSpace(w)); err != nil {
			return nil, &FileError{Path: file, Line: line, Err: fmt.Errorf("Application/%s: %s %q is not an integer", a.Metadata.Name, WaveAnnotation, w)}
		}
	}
	return a, nil
}

// expandSet makes the Applications of an ApplicationSet with list
// generators, its template's {{key}} filled from each element.
func expandSet(o *fluxbuild.Object) ([]*application, []string, error) {
	var set struct {
		Spec struct {
			Generators []map[string]any `json:"generators"`
			Template   map[string]any   `json:"template"`
		} `json:"spec"`
	}
	data, err := yaml.Marshal(o.Node)
	if err != nil {
		return nil, nil, err
	}
	if err := sigyaml.Unmarshal(data, &set); err != nil {
		return nil, nil, &FileError{Path: o.File, Line: o.Line, Err: err}
	}
	tmpl, err := sigyaml.Marshal(set.Spec.Template)
	if err != nil {
		return nil, nil, err
	}
	var apps []*application
	var diffs []string
	for _, g := range set.Spec.Generators {
		list, ok := g["list"].(map[string]any)
		if !ok {
			for kind := range g {
				diffs = append(diffs, fmt.Sprintf("%s:%d: %s: its %s generator is not expanded offline: its Applications are left out", o.File, o.Line, o, kind))
			}
			continue
		}
		elems, _ := list["elements"].([]any)
		for _, e := range elems {
			params, _ := e.(map[string]any)
			text := string(tmpl)
			for k, v := range params {
				text = strings.ReplaceAll(text, "{{"+k+"}}", fmt.Sprint(v))
				text = strings.ReplaceAll(text, "{{ "+k+" }}", fmt.Sprint(v))
			}
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(text), &n); err != nil {
				return nil, nil, &FileError{Path: o.File, Line: o.Line, Err: err}
			}
			a, err := decodeApp(n.Content[0], o.File, o.Line)
			if err != nil {
				return nil, nil, err
			}
			apps = append(apps, a)
		}
	}
	return apps, diffs, nil
}
