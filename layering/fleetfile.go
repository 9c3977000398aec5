package layering

import (
	"fmt"
	"path/filepath"

	"github.com/fluxcd/pkg/apis/kustomize"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/strictyaml"
)

// FleetKind is the kind of a fleet file (apiVersion StackAPIVersion).
const FleetKind = "Fleet"

// fleetDoc is a fleet file: the stack (a stack file, relative to the fleet
// file), the artifact URL template and the clusters.
type fleetDoc struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   fleetMeta    `json:"metadata"`
	Spec       fleetDocSpec `json:"spec"`
}

type fleetMeta struct {
	Name string `json:"name"`
}

type fleetDocSpec struct {
	Stack    string         `json:"stack"`
	Artifact string         `json:"artifact,omitempty"`
	Clusters []fleetCluster `json:"clusters"`
}

type fleetCluster struct {
	Name        string                        `json:"name"`
	Artifact    string                        `json:"artifact,omitempty"`
	Outputs     string                        `json:"outputs,omitempty"`
	Disable     []string                      `json:"disable,omitempty"`
	Layers      map[string]fleetLayerOverride `json:"layers,omitempty"`
	Substitute  map[string]string             `json:"substitute,omitempty"`
	ExtraLayers []stackLayer                  `json:"extraLayers,omitempty"`
}

// fleetLayerOverride is what a cluster may change of a stack's layer.
type fleetLayerOverride struct {
	Interval *metav1.Duration  `json:"interval,omitempty"`
	Timeout  *metav1.Duration  `json:"timeout,omitempty"`
	Patches  []kustomize.Patch `json:"patches,omitempty"`
}

// LoadFleet reads a fleet file (apiVersion fluxpack.dev/v1alpha1, kind
// Fleet):
//
//	apiVersion: fluxpack.dev/v1alpha1
//	kind: Fleet
//	metadata: {name: platform}
//	spec:
//	  stack: ./stack.yaml                      # relative to the fleet file
//	  artifact: oci://registry.example.com/platform/{{cluster}}:main
//	  clusters:
//	    - {name: staging, outputs: terraform/staging.json}
//	    - name: prod
//	      outputs: terraform/prod.json
//	      disable: [sandbox]                   # layers left out
//	      layers: {apps: {interval: 5m}}       # interval, timeout, patches
//	      substitute: {tier: prod}             # extra variables, every layer
//	      extraLayers: [{name: backup, dependsOn: [apps]}]
//
// Decoding is as strict as LoadStack's, each problem a *FileError with its
// line, wrapped in ErrInvalidStack; the stack file is read and decoded
// once, when a cluster's stack is first asked for (Fleet.Stack, Check; see
// StackFileOnce).
func LoadFleet(path string) (*Fleet, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading fleet %s: %w", path, err)
	}
	return ParseFleet(path, data)
}

// ParseFleet is LoadFleet on data; name is the file name, which the
// stack's path is relative to.
func ParseFleet(name string, data []byte) (*Fleet, error) {
	_, doc, fd, err := decodeFile[fleetDoc](name, data, "fleet", checkFleet)
	if err != nil {
		return nil, err
	}
	stackPath := fd.Spec.Stack
	if !filepath.IsAbs(stackPath) {
		stackPath = filepath.Join(filepath.Dir(name), filepath.FromSlash(stackPath))
	}
	f := NewFleet(fd.Metadata.Name, StackFileOnce(stackPath), fd.Spec.Artifact)
	f.file = name
	for i, c := range fd.Spec.Clusters {
		var opts []ClusterOption
		if c.Artifact != "" {
			opts = append(opts, ClusterArtifact(c.Artifact))
		}
		if c.Outputs != "" {
			opts = append(opts, ClusterOutputs(c.Outputs))
		}
		if len(c.Disable) > 0 {
			opts = append(opts, Disable(c.Disable...))
		}
		for _, layer := range sortedKeys(c.Layers) {
			o := c.Layers[layer]
			var so []StepOption
			if o.Interval != nil {
				so = append(so, Interval(o.Interval.Duration))
			}
			if o.Timeout != nil {
				so = append(so, Timeout(o.Timeout.Duration))
			}
			if len(o.Patches) > 0 {
				so = append(so, Patches(o.Patches...))
			}
			opts = append(opts, Override(layer, so...))
		}
		if len(c.Substitute) > 0 {
			opts = append(opts, ExtraVars(c.Substitute))
		}
		cs := f.addCluster(c.Name, name, lineOf(doc, "spec", "clusters", i), opts)
		for j, l := range c.ExtraLayers {
			cs.extra = append(cs.extra, extraLayer{name: l.Name, line: lineOf(doc, "spec", "clusters", i, "extraLayers", j), opts: layerOptions(&l)})
		}
	}
	return f, nil
}

// checkFleet reports what the schema's types cannot: required fields,
// identity, duplicate clusters.
func checkFleet(d *strictyaml.Decoder, doc *yaml.Node, fd *fleetDoc) {
	at := func(path ...any) *yaml.Node { return &yaml.Node{Line: lineOf(doc, path...)} }
	if fd.APIVersion != StackAPIVersion {
		d.Fail(at("apiVersion"), "apiVersion %q: want %s", fd.APIVersion, StackAPIVersion)
	}
	if fd.Kind != FleetKind {
		d.Fail(at("kind"), "kind %q: want %s", fd.Kind, FleetKind)
	}
	if fd.Metadata.Name == "" {
		d.Fail(at("metadata"), "metadata.name is required")
	}
	if fd.Spec.Stack == "" {
		d.Fail(at("spec"), "spec.stack (the stack file) is required")
	}
	if len(fd.Spec.Clusters) == 0 {
		d.Fail(at("spec"), "spec.clusters: at least one cluster is required")
	}
	first := map[string]int{}
	for i, c := range fd.Spec.Clusters {
		switch {
		case c.Name == "":
			d.Fail(at("spec", "clusters", i), "spec.clusters[%d].name is required", i)
		case first[c.Name] > 0:
			d.Fail(at("spec", "clusters", i), "cluster %q declared twice (first at line %d)", c.Name, first[c.Name])
		default:
			first[c.Name] = lineOf(doc, "spec", "clusters", i)
		}
		for j, l := range c.ExtraLayers {
			if l.Name == "" {
				d.Fail(at("spec", "clusters", i, "extraLayers", j), "spec.clusters[%d].extraLayers[%d].name is required", i, j)
			}
		}
	}
}
