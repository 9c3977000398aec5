package lint

import (
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// namespaceNameLabel is the label the API server gives every namespace:
// its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// nsSelection is the namespaces an external-secrets ClusterExternalSecret
// makes its ExternalSecret (and so its Secret) in, as its controller
// selects them: those spec.namespaces names, and those whose labels one of
// spec.namespaceSelector and spec.namespaceSelectors matches (every
// namespace has the label kubernetes.io/metadata.name, its name).
type nsSelection struct {
	names     []string
	selectors []labels.Selector
	// invalid: a selector does not parse; the controller then fails
	// before it selects any namespace.
	invalid bool
}

// readNSSelection reads a ClusterExternalSecret's spec.
func readNSSelection(spec *yaml.Node) *nsSelection {
	s := &nsSelection{}
	for _, n := range contentOf(yamlutil.Field(spec, "namespaces")) {
		if n.Kind == yaml.ScalarNode && n.Value != "" {
			s.names = append(s.names, n.Value)
		}
	}
	sels := contentOf(yamlutil.Field(spec, "namespaceSelectors"))
	if one := yamlutil.Field(spec, "namespaceSelector"); one != nil && one.Kind == yaml.MappingNode {
		sels = append([]*yaml.Node{one}, sels...)
	}
	for _, n := range sels {
		var doc struct {
			MatchLabels      map[string]string `yaml:"matchLabels"`
			MatchExpressions []struct {
				Key      string   `yaml:"key"`
				Operator string   `yaml:"operator"`
				Values   []string `yaml:"values"`
			} `yaml:"matchExpressions"`
		}
		if err := n.Decode(&doc); err != nil {
			s.invalid = true
			continue
		}
		ls := &metav1.LabelSelector{MatchLabels: doc.MatchLabels}
		for _, e := range doc.MatchExpressions {
			ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: metav1.LabelSelectorOperator(e.Operator), Values: e.Values})
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			s.invalid = true
			continue
		}
		s.selectors = append(s.selectors, sel)
	}
	return s
}

// selects says whether the selection takes namespace ns, whose labels
// are nsLabels when known (a Namespace of the platform), and whether
// that is certain: a selector on labels other than the namespace's name
// cannot be decided for a namespace whose labels lint does not know.
func (s *nsSelection) selects(ns string, nsLabels map[string]string, known bool) (yes, certain bool) {
	if s.invalid {
		return false, true
	}
	for _, n := range s.names {
		if n == ns {
			return true, true
		}
	}
	certain = true
	for _, sel := range s.selectors {
		set := labels.Set{namespaceNameLabel: ns}
		if known {
			for k, v := range nsLabels {
				set[k] = v
			}
			set[namespaceNameLabel] = ns
		} else if !onlyName(sel) {
			certain = false
			continue
		}
		if sel.Matches(set) {
			return true, true
		}
	}
	return false, certain
}

// onlyName reports whether sel reads no label but the namespace's name.
func onlyName(sel labels.Selector) bool {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Key() != namespaceNameLabel {
			return false
		}
	}
	return true
}

// madeSecret is a Secret a layer's object makes in a namespace, for the
// rules that ask who makes a substituteFrom or valuesFrom source.
type madeSecret struct {
	source
	// assumed: the object is a ClusterExternalSecret whose selector reads
	// labels of the namespace that lint does not know (it is not a
	// Namespace of the platform): it is taken to select it.
	assumed string
}

// clusterSecretMakers returns the layers whose ClusterExternalSecrets make
// Secret ns/name: every namespace they select gets one. A selection lint
// cannot decide for ns (labels it does not know) is taken to include it,
// and says so (assumed names the ClusterExternalSecret).
func (l *linter) clusterSecretMakers(ns, name string) []madeSecret {
	var out []madeSecret
	for _, c := range l.clusterSecrets {
		o := c.obj
		if o.makesSecret != name {
			continue
		}
		nsObj := l.namespaceObject(ns)
		var lbls map[string]string
		if nsObj != nil {
			lbls = nsObj.labels
		}
		yes, certain := o.makesIn.selects(ns, lbls, nsObj != nil)
		switch {
		case yes:
			out = append(out, madeSecret{source: source{layer: c.layer, keys: o.makesKeys, open: o.makesOpen}})
		case !certain:
			out = append(out, madeSecret{source: source{layer: c.layer, keys: o.makesKeys, open: o.makesOpen}, assumed: o.ref()})
		}
	}
	return out
}

// namespaceObject is a Namespace of the platform named ns, or nil.
func (l *linter) namespaceObject(ns string) *object {
	for _, name := range l.namespaces[ns] {
		ly := l.byName[name]
		if ly == nil {
			continue
		}
		for _, o := range ly.objects {
			if o.Kind == "Namespace" && o.APIVersion == "v1" && o.Name == ns {
				return o
			}
		}
	}
	return nil
}

// layerObject is an object and the layer that applies it.
type layerObject struct {
	layer string
	obj   *object
}
