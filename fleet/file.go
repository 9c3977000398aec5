package fleet

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/fluxcd/pkg/apis/kustomize"
	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/internal/strictyaml"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/stackfile"
)

// Kind is the kind of a fleet file (apiVersion stackfile.APIVersion).
const Kind = "Fleet"

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
	ExtraLayers []stackfile.Layer             `json:"extraLayers,omitempty"`
}

// fleetLayerOverride is what a cluster may change of a stack's layer.
type fleetLayerOverride struct {
	Interval *metav1.Duration  `json:"interval,omitempty"`
	Timeout  *metav1.Duration  `json:"timeout,omitempty"`
	Patches  []kustomize.Patch `json:"patches,omitempty"`
}

// Load reads a fleet file (apiVersion fluxpack.dev/v1alpha1, kind
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
// Decoding is as strict as stackfile.Load's, each problem a
// *layering.FileError with its line, wrapped in stackfile.ErrInvalid; the
// stack file is read and decoded once, when a cluster's stack is first
// asked for (Fleet.Stack, Check; see stackfile.Once).
func Load(path string) (*Fleet, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading fleet %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse is Load on data; name is the file name, which the
// stack's path is relative to.
func Parse(name string, data []byte) (*Fleet, error) {
	var fd fleetDoc
	d, doc, err := strictyaml.File(name, data, "fleet", hooks, &fd)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", stackfile.ErrInvalid, err)
	}
	if d.Err() == nil {
		checkFleet(d, doc, &fd)
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", stackfile.ErrInvalid, err)
	}
	stackPath := fd.Spec.Stack
	if !filepath.IsAbs(stackPath) {
		stackPath = filepath.Join(filepath.Dir(name), filepath.FromSlash(stackPath))
	}
	f := New(fd.Metadata.Name, stackfile.Once(stackPath), fd.Spec.Artifact)
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
		for _, layer := range slices.Sorted(maps.Keys(c.Layers)) {
			o := c.Layers[layer]
			var so []layering.StepOption
			if o.Interval != nil {
				so = append(so, layering.Interval(o.Interval.Duration))
			}
			if o.Timeout != nil {
				so = append(so, layering.Timeout(o.Timeout.Duration))
			}
			if len(o.Patches) > 0 {
				so = append(so, layering.Patches(o.Patches...))
			}
			opts = append(opts, Override(layer, so...))
		}
		if len(c.Substitute) > 0 {
			opts = append(opts, ExtraVars(c.Substitute))
		}
		cs := f.addCluster(c.Name, name, strictyaml.LineOf(doc, "spec", "clusters", i), opts)
		for j, l := range c.ExtraLayers {
			cs.extra = append(cs.extra, extraLayer{name: l.Name, line: strictyaml.LineOf(doc, "spec", "clusters", i, "extraLayers", j), opts: l.Options()})
		}
	}
	return f, nil
}

// hooks are the strict decoder's hooks for the fleet file's types:
// durations checked as they are read.
var hooks = map[reflect.Type]strictyaml.Hook{strictyaml.DurationType: strictyaml.Duration}

// checkFleet reports what the schema's types cannot: required fields,
// identity, duplicate clusters.
func checkFleet(d *strictyaml.Decoder, doc *yaml.Node, fd *fleetDoc) {
	at := func(path ...any) *yaml.Node { return &yaml.Node{Line: strictyaml.LineOf(doc, path...)} }
	if fd.APIVersion != stackfile.APIVersion {
		d.Fail(at("apiVersion"), "apiVersion %q: want %s", fd.APIVersion, stackfile.APIVersion)
	}
	if fd.Kind != Kind {
		d.Fail(at("kind"), "kind %q: want %s", fd.Kind, Kind)
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
			first[c.Name] = strictyaml.LineOf(doc, "spec", "clusters", i)
		}
		for j, l := range c.ExtraLayers {
			if l.Name == "" {
				d.Fail(at("spec", "clusters", i, "extraLayers", j), "spec.clusters[%d].extraLayers[%d].name is required", i, j)
			}
		}
	}
}
