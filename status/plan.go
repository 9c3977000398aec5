package status

import (
	"errors"

	"github.com/fluxpack/fluxpack/internal/errdefs"
)

// StateMissing is a layer the plan (WithPlan) has and the cluster has not:
// its Kustomization was never applied, or was deleted.
const StateMissing State = "Missing"

// Planned is a layer of a plan: a stack file's or a fleet cluster's
// Kustomization, and the layers it depends on.
type Planned struct {
	Ref
	// DependsOn are its spec.dependsOn, namespace/name.
	DependsOn []string
}

// WithPlan lays the cluster out along a plan's graph: every planned layer
// is in the snapshot, the ones the cluster lacks as Missing with the
// plan's dependencies, so a layer a stack declares but nothing applied is
// seen (and blocks the layers waiting on it) rather than left out. The
// layers the cluster has beyond the plan (its root Kustomization, say)
// stay.
func WithPlan(layers ...Planned) Option {
	return func(o *options) error {
		var errs []error
		for _, l := range layers {
			if l.Kind == "" || l.Namespace == "" || l.Name == "" {
				errs = append(errs, errdefs.InvalidOption("WithPlan: planned layer %s: want a kind, a namespace and a name", l))
			}
		}
		o.plan = append(o.plan, layers...)
		return errors.Join(errs...)
	}
}

// missing returns the planned layers that are not among layers.
func missing(plan []Planned, layers map[Ref]Layer) []Layer {
	var out []Layer
	for _, p := range plan {
		if _, ok := layers[p.Ref]; ok {
			continue
		}
		out = append(out, Layer{Ref: p.Ref, State: StateMissing, DependsOn: p.DependsOn, Message: "not in the cluster: the plan has it"})
	}
	return out
}
