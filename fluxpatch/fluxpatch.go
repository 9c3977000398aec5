package fluxpatch

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/kustomize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// Format is a format Render writes in.
type Format string

// Patch formats: the two ways people install Flux and patch its
// controllers.
const (
	// Bootstrap is the kustomization.yaml of flux bootstrap's
	// flux-system folder (gotk-components.yaml, gotk-sync.yaml) with
	// patches, as Flux's bootstrap customization documents it.
	Bootstrap Format = "bootstrap"
	// FluxInstance is a FluxInstance of flux-operator
	// (fluxcd.controlplane.io/v1) holding the patches in
	// spec.kustomize.patches, to merge into the cluster's FluxInstance.
	FluxInstance Format = "fluxinstance"
)

// Formats lists the formats Render writes.
func Formats() []Format { return []Format{Bootstrap, FluxInstance} }

// ParseFormat reads a format's name, as --format takes it.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", errdefs.Kind(ErrInvalidOption, "unknown patch format %q: want bootstrap or fluxinstance", s)
}

// Controller names a Flux controller whose Deployment Render
// patches: the two that poll dependencies every --requeue-dependency.
type Controller string

// The controllers that take --requeue-dependency.
const (
	KustomizeController Controller = "kustomize-controller"
	HelmController      Controller = "helm-controller"
)

// MinRequeueDependency is the shortest --requeue-dependency Render
// sets. A shorter one makes every waiting Kustomization poll the API server
// many times a second.
const MinRequeueDependency = time.Second

// Options say what Render writes. Build them from
// DefaultOptions; Validate says what is wrong with them.
type Options struct {
	// RequeueDependency is the --requeue-dependency to set: at least
	// MinRequeueDependency.
	RequeueDependency time.Duration
	// Controllers are the Deployments to patch, each once.
	Controllers []Controller
	// Format is what Render writes.
	Format Format
}

// DefaultOptions patches kustomize-controller and helm-controller
// to look at dependencies every 5s, as a flux bootstrap kustomization.yaml.
func DefaultOptions() Options {
	return Options{
		RequeueDependency: 5 * time.Second,
		Controllers:       []Controller{KustomizeController, HelmController},
		Format:            Bootstrap,
	}
}

// Validate reports every problem of the options at once (each wrapping
// ErrInvalidOption), or nil.
func (o Options) Validate() error {
	var errs []error
	if o.RequeueDependency < MinRequeueDependency {
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "requeue dependency %s: must be at least %s", o.RequeueDependency, MinRequeueDependency))
	}
	if len(o.Controllers) == 0 {
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "no controller to patch: want %s, %s or both", KustomizeController, HelmController))
	}
	for i, c := range o.Controllers {
		switch {
		case c != KustomizeController && c != HelmController:
			errs = append(errs, errdefs.Kind(ErrInvalidOption, "controller %q: only %s and %s take --requeue-dependency", c, KustomizeController, HelmController))
		case slices.Contains(o.Controllers[:i], c):
			errs = append(errs, errdefs.Kind(ErrInvalidOption, "controller %q: given twice", c))
		}
	}
	if !slices.Contains(Formats(), o.Format) {
		errs = append(errs, errdefs.Kind(ErrInvalidOption, "unknown patch format %q: want bootstrap or fluxinstance", o.Format))
	}
	return joinErrs(errs)
}

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value string `json:"value"`
}

// Render writes the patch that sets --requeue-dependency on Flux's
// controllers, for users who control their Flux installation. In stock Flux
// a Kustomization (or HelmRelease) whose dependencies are not Ready is
// looked at again only after --requeue-dependency, 30s by default
// (DefaultRequeueDependency); the patch appends the flag to the first
// container's args of each controller's Deployment, and the controller,
// which parses its flags with pflag, takes the last value given.
//
// It is optional: fluxpack's own answer in stock Flux is to wake dependents
// through notification-controller (WakeDependents) and to need fewer edges
// (lint's RuleMerge hints). Use it where you may change Flux itself:
// Bootstrap writes flux-system/kustomization.yaml as flux bootstrap
// writes it, with the patches (add them to yours if it has patches
// already); FluxInstance writes the FluxInstance of flux-operator
// whose spec.kustomize.patches to merge into the cluster's.
func Render(o Options) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("writing the Flux patch: %w", err)
	}
	flag := "--requeue-dependency=" + o.RequeueDependency.String()
	var patches []kustomize.Patch
	for _, c := range o.Controllers {
		op, err := sigyaml.Marshal([]jsonPatchOp{{Op: "add", Path: "/spec/template/spec/containers/0/args/-", Value: flag}})
		if err != nil {
			return nil, fmt.Errorf("writing the patch of Deployment/flux-system/%s: %w", c, err)
		}
		patches = append(patches, kustomize.Patch{Patch: string(op), Target: &kustomize.Selector{Kind: "Deployment", Name: string(c)}})
	}
	names := make([]string, len(o.Controllers))
	for i, c := range o.Controllers {
		names[i] = string(c)
	}
	var header string
	var obj any
	switch o.Format {
	case Bootstrap:
		header = fmt.Sprintf("# flux-system/kustomization.yaml as flux bootstrap writes it, with patches that\n"+
			"# set %s on %s.\n"+
			"# Optional (rendered by fluxpack): if yours has patches already, add these.\n", flag, strings.Join(names, " and "))
		obj = struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Resources  []string          `json:"resources"`
			Patches    []kustomize.Patch `json:"patches"`
		}{"kustomize.config.k8s.io/v1beta1", "Kustomization", []string{"gotk-components.yaml", "gotk-sync.yaml"}, patches}
	case FluxInstance:
		header = fmt.Sprintf("# For a Flux that flux-operator installs: merge spec.kustomize.patches into\n"+
			"# your FluxInstance. They set %s on %s.\n"+
			"# Optional (rendered by fluxpack).\n", flag, strings.Join(names, " and "))
		type kustomizeSpec struct {
			Patches []kustomize.Patch `json:"patches"`
		}
		type spec struct {
			Kustomize kustomizeSpec `json:"kustomize"`
		}
		obj = struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
			Spec            spec              `json:"spec"`
		}{
			TypeMeta: metav1.TypeMeta{APIVersion: "fluxcd.controlplane.io/v1", Kind: "FluxInstance"},
			Metadata: metav1.ObjectMeta{Name: "flux", Namespace: "flux-system"},
			Spec:     spec{Kustomize: kustomizeSpec{Patches: patches}},
		}
	}
	data, err := marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("writing the Flux patch: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(header)
	b.Write(data)
	return b.Bytes(), nil
}

// ErrInvalidOption is wrapped by the error of Options that are not valid.
var ErrInvalidOption = errdefs.ErrInvalidOption

func joinErrs(errs []error) error { return errors.Join(errs...) }

// marshal is the YAML of obj, as kubectl would write it.
func marshal(obj any) ([]byte, error) { return sigyaml.Marshal(obj) }
