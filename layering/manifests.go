package layering

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/yamlcheck"
	"github.com/fluxpack/fluxpack/substitute"
)

// object is one Kubernetes object of a layer, with what the lint rules read.
type object struct {
	apiVersion, kind, namespace, name string
	file                              string // slash path relative to the lint root
	line                              int

	crd        *crdInfo // for CustomResourceDefinitions
	webhooks   []string // API groups whose admission a webhook configuration intercepts ("*" for all)
	helmCRDs   string   // for HelmReleases: the install CRD policy (Create when unset)
	skipSubst  bool     // kustomize.toolkit.fluxcd.io/substitute: disabled
	data       []string // keys of a ConfigMap's data or a Secret's data/stringData
	secretLike bool
	local      bool // config.kubernetes.io/local-config: kustomize leaves it out
}

type crdInfo struct{ group, kind, scope string }

func (o *object) group() string {
	g, _, ok := strings.Cut(o.apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// ref is how findings name the object: Kind/namespace/name or Kind/name.
func (o *object) ref() string {
	if o.namespace != "" {
		return o.kind + "/" + o.namespace + "/" + o.name
	}
	return o.kind + "/" + o.name
}

// errRemote refuses what would make kustomize reach the network.
var errRemote = errors.New("remote resources are not read: lint never touches the network")

// loadLayer returns the objects kustomize-controller would apply for a
// Kustomization layer: the kustomize build of root/spec.path, with the
// kustomization.yaml Flux generates when there is none (every YAML file,
// and every subdirectory holding a kustomization, as a resource) and the
// layer's targetNamespace, patches and components applied as Flux does.
//
// A directory without a kustomization file and a layer without those fields
// is read directly, which is what kustomize would produce, only faster and
// with exact lines.
//
// With keep, it also returns the manifests for a VarChecker, with the
// ${var} uses package substitute reads in them found as they are parsed.
// Built objects are serialised for VarFile.Data only with keepData: the
// default checker reads the uses.
func loadLayer(root, layerPath string, targetNamespace string, patches []kustypes.Patch, components []string, keep, keepData bool) ([]*object, []VarFile, error) {
	dir := filepath.Join(root, filepath.FromSlash(layerPath))
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, errorf(ErrMissingPath, "path %q: %v", layerPath, unwrapPathError(err))
	}
	if !info.IsDir() {
		return nil, nil, errorf(ErrMissingPath, "path %q is not a directory", layerPath)
	}
	kfile, files, plain, err := scanLayer(dir)
	if err != nil {
		return nil, nil, err
	}
	if kfile == "" && plain && targetNamespace == "" && len(patches) == 0 && len(components) == 0 {
		var objs []*object
		var kept []VarFile
		for _, f := range files {
			content, err := inputfile.ReadManifest(f)
			if err != nil {
				return nil, nil, err
			}
			rel := relSlash(root, f)
			o, uses, err := parseObjects(rel, content, keep)
			if err != nil {
				return nil, nil, err
			}
			objs = append(objs, o...)
			if keep {
				kept = append(kept, VarFile{Path: rel, Line: 1, Data: content, uses: uses})
			}
		}
		if err := checkUnique(objs); err != nil {
			return nil, nil, err
		}
		// kustomize drops local configuration after it has all objects.
		objs = slices.DeleteFunc(objs, func(o *object) bool { return o.local })
		return objs, kept, nil
	}
	return buildLayer(root, dir, kfile, files, targetNamespace, patches, components, keep, keepData)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// scanLayer finds dir's kustomization file, or the resources Flux would
// list in a generated one (sorted, as a lexical walk gives them). plain is
// false when a subdirectory has its own kustomization.
func scanLayer(dir string) (kfile string, resources []string, plain bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, false, err
	}
	if k := kustomizationIn(dir, entries); k != "" {
		return k, nil, false, nil
	}
	plain = true
	var walk func(dir string, entries []os.DirEntry) error
	walk = func(dir string, entries []os.DirEntry) error {
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() {
				sub, err := os.ReadDir(p)
				if err != nil {
					return err
				}
				if kustomizationIn(p, sub) != "" {
					resources = append(resources, p)
					plain = false
					continue
				}
				if err := walk(p, sub); err != nil {
					return err
				}
				continue
			}
			if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
				resources = append(resources, p)
			}
		}
		return nil
	}
	return "", resources, plain, walk(dir, entries)
}

// kustomizationIn returns the kustomization file of dir, whose entries
// (sorted) are given, or "": the first of kustomize's recognized names
// that is not a directory, following symbolic links as kustomize does.
func kustomizationIn(dir string, entries []os.DirEntry) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		i, found := slices.BinarySearchFunc(entries, name, func(e os.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
		if !found {
			continue
		}
		p := filepath.Join(dir, name)
		if entries[i].Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err != nil || fi.IsDir() {
				continue
			}
		} else if entries[i].IsDir() {
			continue
		}
		return p
	}
	return ""
}

// readObjects parses one manifest file with line numbers.
func readObjects(root, file string) ([]*object, error) {
	data, err := inputfile.ReadManifest(file)
	if err != nil {
		return nil, err
	}
	objs, _, err := parseObjects(relSlash(root, file), data, false)
	return objs, err
}

// parseObjects parses the manifests of one file, rel naming it, as
// kustomize reads them (readManifests), and with withUses the ${var} uses
// in them when the file has a $ at all.
func parseObjects(rel string, data []byte, withUses bool) ([]*object, *substitute.Uses, error) {
	nodes, err := readManifests(rel, data)
	if err != nil {
		return nil, nil, err
	}
	objs := make([]*object, 0, len(nodes))
	applied := nodes[:0:0]
	for _, n := range nodes {
		o, err := readObject(n)
		if err != nil {
			return nil, nil, &FileError{Path: rel, Line: n.Line, Err: err}
		}
		o.file, o.line = rel, n.Line
		objs = append(objs, o)
		if !o.local {
			applied = append(applied, n)
		}
	}
	if !withUses || bytes.IndexByte(data, '$') < 0 {
		return objs, nil, nil
	}
	return objs, substitute.FindUses(rel, applied...), nil
}

// readObject is objectFromNode for an object that Flux will turn into
// JSON, which fails for some (checkObject); local configuration, which
// kustomize drops, never gets that far.
func readObject(n *yaml.Node) (*object, error) {
	o, err := objectFromNode(n)
	if err != nil || o.local {
		return o, err
	}
	if err := checkObject(n); err != nil {
		return nil, err
	}
	return o, nil
}

// checkUnique refuses two objects with the same id, as kustomize does
// ("may not add resource with an already registered id"): same group,
// version, kind, name and namespace, no namespace being "default".
func checkUnique(objs []*object) error {
	type id struct{ apiVersion, kind, namespace, name string }
	seen := make(map[id]*object, len(objs))
	for _, o := range objs {
		k := id{o.apiVersion, o.kind, o.namespace, o.name}
		if k.namespace == "default" {
			k.namespace = ""
		}
		if first, dup := seen[k]; dup {
			return &FileError{Path: o.file, Line: o.line, Err: fmt.Errorf("%s is already at %s:%d: kustomize refuses two objects with one id", o.ref(), first.file, first.line)}
		}
		seen[k] = o
	}
	return nil
}

func relSlash(root, file string) string {
	rel, err := filepath.Rel(root, file)
	if err != nil {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}

// field returns the value node of key in mapping n, or nil.
func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func str(n *yaml.Node, keys ...string) string {
	for _, k := range keys {
		n = field(n, k)
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func objectFromNode(n *yaml.Node) (*object, error) {
	o := &object{
		apiVersion: str(n, "apiVersion"),
		kind:       str(n, "kind"),
		name:       str(n, "metadata", "name"),
		namespace:  str(n, "metadata", "namespace"),
	}
	if v := field(field(field(n, "metadata"), "annotations"), konfig.IgnoredByKustomizeAnnotation); v != nil {
		o.local = v.Kind != yaml.ScalarNode || v.Value != "false"
		if o.local {
			return o, nil // kustomize drops it; only its id counts
		}
	}
	if o.apiVersion == "" || o.kind == "" {
		return nil, fmt.Errorf("not a Kubernetes object: apiVersion and kind are required")
	}
	if o.name == "" && str(n, "metadata", "generateName") == "" {
		return nil, fmt.Errorf("%s: metadata.name is required", o.kind)
	}
	const substAnno = "kustomize.toolkit.fluxcd.io/substitute"
	o.skipSubst = str(n, "metadata", "annotations", substAnno) == "disabled" || str(n, "metadata", "labels", substAnno) == "disabled"
	switch {
	case o.kind == "CustomResourceDefinition" && o.group() == "apiextensions.k8s.io":
		o.crd = &crdInfo{group: str(n, "spec", "group"), kind: str(n, "spec", "names", "kind"), scope: str(n, "spec", "scope")}
	case (o.kind == "ValidatingWebhookConfiguration" || o.kind == "MutatingWebhookConfiguration") && o.group() == "admissionregistration.k8s.io":
		if hooks := field(n, "webhooks"); hooks != nil {
			for _, h := range hooks.Content {
				if rules := field(h, "rules"); rules != nil {
					for _, r := range rules.Content {
						if groups := field(r, "apiGroups"); groups != nil {
							for _, g := range groups.Content {
								if !slices.Contains(o.webhooks, g.Value) {
									o.webhooks = append(o.webhooks, g.Value)
								}
							}
						}
					}
				}
			}
		}
	case o.kind == "HelmRelease" && strings.HasPrefix(o.apiVersion, "helm.toolkit.fluxcd.io/"):
		o.helmCRDs = str(n, "spec", "install", "crds")
		if o.helmCRDs == "" {
			o.helmCRDs = "Create"
			if str(n, "spec", "install", "skipCRDs") == "true" {
				o.helmCRDs = "Skip"
			}
		}
	case o.kind == "ConfigMap" && o.apiVersion == "v1", o.kind == "Secret" && o.apiVersion == "v1":
		o.secretLike = o.kind == "Secret"
		for _, k := range []string{"data", "stringData", "binaryData"} {
			if d := field(n, k); d != nil && d.Kind == yaml.MappingNode {
				for i := 0; i < len(d.Content); i += 2 {
					o.data = append(o.data, d.Content[i].Value)
				}
			}
		}
	}
	return o, nil
}

// kustomizeMu serialises krusty builds: kustomize keeps global state (the
// OpenAPI schema) that concurrent builds race on, as Flux also works around.
var kustomizeMu sync.Mutex

// originAnnotation is where kustomize records the file an object came from
// when buildMetadata has originAnnotations.
const originAnnotation = "config.kubernetes.io/origin"

func buildLayer(root, dir, kfile string, files []string, targetNamespace string, patches []kustypes.Patch, components []string, keep, keepData bool) ([]*object, []VarFile, error) {
	var k kustypes.Kustomization
	kname := filepath.Join(dir, konfig.DefaultKustomizationFileName())
	if kfile != "" {
		data, err := os.ReadFile(kfile)
		if err != nil {
			return nil, nil, err
		}
		if err := sigyaml.Unmarshal(data, &k); err != nil {
			return nil, nil, &FileError{Path: relSlash(root, kfile), Err: fmt.Errorf("reading kustomization: %w", err)}
		}
		kname = kfile
	} else {
		for _, f := range files {
			k.Resources = append(k.Resources, "./"+filepath.ToSlash(must(filepath.Rel(dir, f))))
		}
		if len(k.Resources) == 0 {
			k.Namespace = "_placeholder" // as Flux does, to build an empty directory
		}
	}
	if err := checkLocal(root, dir, &k, map[string]bool{}); err != nil {
		return nil, nil, err
	}
	// What kustomize-controller adds to the kustomization.
	k.APIVersion, k.Kind = kustypes.KustomizationVersion, kustypes.KustomizationKind
	if targetNamespace != "" {
		k.Namespace = targetNamespace
	}
	k.Patches = append(k.Patches, patches...)
	k.Components = append(k.Components, components...)
	if !slices.Contains(k.BuildMetadata, kustypes.OriginAnnotations) {
		k.BuildMetadata = append(k.BuildMetadata, kustypes.OriginAnnotations)
	}
	data, err := sigyaml.Marshal(&k)
	if err != nil {
		return nil, nil, err
	}
	fsys := overlayFS{FileSystem: filesys.MakeFsOnDisk(), path: kname, data: data}

	kustomizeMu.Lock()
	resMap, err := func() (_ resmap.ResMap, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("kustomize panicked: %v", r)
			}
		}()
		opts := &krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsNone, PluginConfig: kustypes.DisabledPluginConfig()}
		return krusty.MakeKustomizer(opts).Run(fsys, dir)
	}()
	kustomizeMu.Unlock()
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize build of %s: %w", relSlash(root, dir), err)
	}
	lines := &lineIndex{root: root, files: map[string][]*object{}}
	var objs []*object
	var kept []VarFile
	for _, r := range resMap.Resources() {
		origin := originPath(r)
		// The objects are read from kustomize's own nodes: they hold what
		// its output would, less the formatting.
		o, err := readObject(r.YNode())
		if err != nil {
			return nil, nil, fmt.Errorf("kustomize build of %s: %s/%s: %w", relSlash(root, dir), r.GetKind(), r.GetName(), err)
		}
		o.file, o.line = relSlash(root, kname), 0
		if origin != "" {
			o.file, o.line = lines.find(filepath.Join(dir, filepath.FromSlash(origin)), o)
		}
		objs = append(objs, o)
		if !keep {
			continue
		}
		// What Flux substitutes: the object without the origin annotation
		// added for the lines above.
		_ = r.PipeE(kyaml.ClearAnnotation(originAnnotation))
		vf := VarFile{Path: o.file, Line: max(o.line, 1), Built: true, uses: substitute.FindUses(o.file, r.YNode())}
		if keepData {
			if vf.Data, err = r.AsYAML(); err != nil {
				return nil, nil, err
			}
		}
		kept = append(kept, vf)
	}
	return objs, kept, nil
}

func must[T any](v T, _ error) T { return v }

// checkLocal refuses kustomization entries that kustomize would fetch (URLs,
// git repositories) and follows local ones, so a build never reaches the
// network.
func checkLocal(root, dir string, k *kustypes.Kustomization, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	entries := slices.Concat(k.Resources, k.Components, k.Bases) //nolint:staticcheck // Bases still builds
	for _, e := range entries {
		if looksRemote(e) {
			return fmt.Errorf("%s: resource %q: %w", relSlash(root, dir), e, errRemote)
		}
		p := filepath.Join(dir, filepath.FromSlash(e))
		fi, err := os.Stat(p)
		if err != nil {
			continue // missing: kustomize reports it
		}
		if !fi.IsDir() {
			// kustomize would crash on an alias inside its own anchor.
			data, err := inputfile.ReadManifest(p)
			if err == nil {
				err = yamlcheck.Check(data)
			}
			if err != nil {
				return &FileError{Path: relSlash(root, p), Err: err}
			}
			continue
		}
		for _, name := range konfig.RecognizedKustomizationFileNames() {
			data, err := os.ReadFile(filepath.Join(p, name))
			if err != nil {
				continue
			}
			var sub kustypes.Kustomization
			if err := sigyaml.Unmarshal(data, &sub); err != nil {
				return &FileError{Path: relSlash(root, filepath.Join(p, name)), Err: err}
			}
			if err := checkLocal(root, p, &sub, seen); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// looksRemote is true for what kustomize reads as a URL or a git
// repository (scheme://, git@host:, gh:, host.tld/...).
func looksRemote(e string) bool {
	if strings.Contains(e, "://") || strings.HasPrefix(e, "git@") || strings.HasPrefix(e, "gh:") || strings.HasPrefix(e, "git::") || strings.Contains(e, "?ref=") {
		return true
	}
	first, rest, ok := strings.Cut(e, "/")
	return ok && rest != "" && first != "." && first != ".." && strings.Contains(first, ".")
}

// overlayFS is the disk with one kustomization file replaced.
type overlayFS struct {
	filesys.FileSystem
	path string
	data []byte
}

func (f overlayFS) ReadFile(p string) ([]byte, error) {
	if filepath.Clean(p) == f.path {
		return slices.Clone(f.data), nil
	}
	return f.FileSystem.ReadFile(p)
}

func (f overlayFS) Exists(p string) bool {
	return filepath.Clean(p) == f.path || f.FileSystem.Exists(p)
}

func (f overlayFS) IsDir(p string) bool {
	return filepath.Clean(p) != f.path && f.FileSystem.IsDir(p)
}

// lineIndex finds an object's line in the file it came from.
type lineIndex struct {
	root  string
	files map[string][]*object
}

func (x *lineIndex) find(file string, o *object) (string, int) {
	objs, ok := x.files[file]
	if !ok {
		objs, _ = readObjects(x.root, file)
		x.files[file] = objs
	}
	rel := relSlash(x.root, file)
	var sameKind *object
	for _, c := range objs {
		if c.kind != o.kind {
			continue
		}
		if c.name == o.name || strings.Contains(o.name, c.name) && c.name != "" {
			return rel, c.line
		}
		if sameKind == nil {
			sameKind = c
		}
	}
	if sameKind != nil {
		return rel, sameKind.line
	}
	return rel, 1
}

func originPath(r *resource.Resource) string {
	anno := r.GetAnnotations()[originAnnotation]
	if anno == "" {
		return ""
	}
	var origin struct {
		Path string `json:"path"`
	}
	if err := sigyaml.Unmarshal([]byte(anno), &origin); err != nil {
		return ""
	}
	return path.Clean(origin.Path)
}
