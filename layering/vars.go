package layering

import (
	"context"
	"path/filepath"
	"slices"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
)

// VarChecker checks the ${var} uses of one layer against the variables the
// layer makes available, the way kustomize-controller substitutes them.
// Package substitute implements the checks; Lint only gathers, per layer,
// the manifests and the variables (RuleVariables). Without a VarChecker
// Lint skips that rule.
type VarChecker interface {
	CheckVars(ctx context.Context, layer VarLayer) ([]Finding, error)
}

// VarLayer is what a VarChecker gets for one layer that has
// spec.postBuild.
type VarLayer struct {
	Name string
	// Files are the layer's manifests as Flux substitutes them. For a
	// directory read as is, each is a whole file (Line 1). For a kustomize
	// build, each is one built object (Built), named after the file it came
	// from with Line its line there; kustomize re-serialises objects, so
	// Data's lines do not line up with the file and findings in it belong
	// at Line.
	Files []VarFile
	// Values are the inline spec.postBuild.substitute variables.
	Values map[string]string
	// Names are the keys of the substituteFrom ConfigMaps and Secrets that
	// some layer of the stack defines (in the stack's namespace).
	Names []string
	// Unresolved are the substituteFrom entries no layer defines: a vars
	// ConfigMap package substitute renders from IaC outputs (see Vars), or
	// an object made outside the stack. Optional ones are left out.
	Unresolved []kustomizev1.SubstituteReference
	// Vars are the stack file's vars entries, with Outputs made relative to
	// the working directory, so a checker can read the IaC outputs behind
	// an Unresolved ConfigMap.
	Vars []StackVars
}

// VarFile is one manifest file, or one built object, of a layer.
type VarFile struct {
	Path  string
	Line  int // line of Path where Data starts
	Data  []byte
	Built bool
}

// checkVariables hands every layer with postBuild to the VarChecker.
func (l *linter) checkVariables(ctx context.Context) error {
	if l.cfg.vars == nil {
		return nil
	}
	// substituteFrom sources defined by the stack's own layers.
	sources := map[string][]string{}
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if (o.kind == "ConfigMap" || o.kind == "Secret") && o.apiVersion == "v1" {
				ns := o.namespace
				if ns == "" {
					ns = ly.ks.Spec.TargetNamespace
				}
				if ns == l.b.stack.namespace {
					sources[o.kind+"/"+o.name] = o.data
				}
			}
		}
	}
	vars := slices.Clone(l.b.vars)
	for i, v := range vars {
		if v.Outputs != "" && l.b.dir != "" {
			vars[i].Outputs = filepath.Join(l.b.dir, filepath.FromSlash(v.Outputs))
		}
	}
	for _, ly := range l.layers {
		pb := ly.ks.Spec.PostBuild
		if pb == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		in := VarLayer{Name: ly.name, Files: ly.varFiles, Values: pb.Substitute, Vars: vars}
		for _, ref := range pb.SubstituteFrom {
			keys, ok := sources[ref.Kind+"/"+ref.Name]
			switch {
			case ok:
				for _, k := range keys {
					if !slices.Contains(in.Names, k) {
						in.Names = append(in.Names, k)
					}
				}
			case !ref.Optional:
				in.Unresolved = append(in.Unresolved, ref)
			}
		}
		slices.Sort(in.Names)
		fs, err := l.cfg.vars.CheckVars(ctx, in)
		if err != nil {
			return err
		}
		for _, f := range fs {
			f.Rule, f.Layer = RuleVariables, ly.name
			l.add(f)
		}
	}
	return nil
}
