package fluxrepo

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// fluxInstanceName is the name flux-operator's FluxInstance must have
// (one per cluster), the name the flux-instance chart gives it.
const fluxInstanceName = "flux"

// instanceSyncFor looks in the repository at root for a flux-operator
// instance that syncs the entry point (rel, from root) from the source
// want: a FluxInstance, a HelmRelease of the flux-instance chart with its
// values inline, or a values file of that chart (instance.sync), as
// home-ops repositories install the instance. Such an instance makes want
// for the repository itself, under a name of its own (spec.sync.name), and
// defines it nowhere in the tree. It returns nil when none does.
func instanceSyncFor(root, rel string, want SourceRef) *instanceSync {
	var found *instanceSync
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case found != nil:
			return filepath.SkipAll
		case err != nil:
			return nil // an entry that cannot be read holds no instance
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte("sync:")) || !bytes.Contains(data, []byte(want.Name)) {
			return nil
		}
		fileRel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		for doc, err := range yamlutil.Documents(bytes.NewReader(data)) {
			if err != nil {
				return nil
			}
			if len(doc.Content) == 0 {
				continue
			}
			if s := instanceSyncIn(doc.Content[0], filepath.ToSlash(fileRel), want.Namespace); s != nil && s.source == want && s.path != "" && cleanPath(s.path) == cleanPath(rel) {
				found = s
				return filepath.SkipAll
			}
		}
		return nil
	})
	return found
}

// instanceSyncIn reads the sync of the instance n describes, if any: a
// FluxInstance, a HelmRelease whose values hold instance.sync (the
// flux-instance chart's), or those values themselves (a values file, whose
// release namespace is not known: ns stands for it).
func instanceSyncIn(n *yaml.Node, file, ns string) *instanceSync {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	o := &fluxbuild.Object{APIVersion: yamlutil.Str(n, "apiVersion"), Kind: yamlutil.Str(n, "kind"),
		Namespace: yamlutil.Str(n, "metadata", "namespace"), Name: yamlutil.Str(n, "metadata", "name"), Node: n, File: file, Line: n.Line}
	if o.Kind == "FluxInstance" {
		return fluxInstance([]*fluxbuild.Object{o})
	}
	values := n
	if o.Kind == "HelmRelease" {
		values = yamlutil.Field(yamlutil.Field(n, "spec"), "values")
		ns = namespaceOr(yamlutil.Str(n, "spec", "targetNamespace"), namespaceOr(o.Namespace, DefaultNamespace))
	}
	instance := yamlutil.Field(values, "instance")
	if instance == nil || yamlutil.Field(instance, "sync") == nil {
		return nil
	}
	// The FluxInstance the chart makes from its values.
	spec := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "spec"}, instance}}
	return fluxInstance([]*fluxbuild.Object{{APIVersion: fluxInstanceGroup + "/v1", Kind: "FluxInstance", Namespace: ns, Name: fluxInstanceName,
		Node: spec, File: file, Line: yamlutil.Field(instance, "sync").Line}})
}

// withInstance reads the entry point as if it held the FluxInstance s
// (instanceSyncFor found it elsewhere): its source is the repository.
func withInstance(s *instanceSync) Option {
	return funcOption(func(c *config) error {
		c.instance = s // applyInstance maps its source to the root
		return nil
	})
}

// selfSync returns, for a tree read without a FluxInstance at its entry
// point (rel), the instance elsewhere in the repository that syncs the
// entry point from a source the entry point's own Kustomizations read but
// nothing in the tree defines nor maps (the GitRepository a FluxInstance
// makes under spec.sync.name, say home-kubernetes, where flux bootstrap
// would have made flux-system); nil when there is none.
func (r *reader) selfSync(rel string) *instanceSync {
	if r.instance != nil || len(r.layers) == 0 {
		return nil
	}
	tried := map[SourceRef]bool{}
	for _, l := range r.layers[1:] {
		if l.Unavailable == "" || l.Parent != r.layers[0].Name {
			continue
		}
		ref := sourceOf(l.Kustomization)
		switch ref.Kind {
		case "GitRepository", "OCIRepository", "Bucket":
		default:
			continue
		}
		if _, mapped := r.cfg.sources[ref]; mapped || tried[ref] {
			continue
		}
		if _, defined := r.srcObjs[ref]; defined {
			continue
		}
		tried[ref] = true
		if s := instanceSyncFor(r.root, rel, ref); s != nil {
			return s
		}
	}
	return nil
}
