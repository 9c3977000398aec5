package layering

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/fluxpack/fluxpack/substitute"
)

// VarChecker checks the ${var} uses of one layer against the variables the
// layer makes available, the way kustomize-controller substitutes them.
// Lint uses package substitute's static checks (substitute.Check) unless
// WithVarChecker gives another one.
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
	// Values are the variables whose values are known: the plain IaC
	// outputs of the stack's vars ConfigMaps among the layer's
	// substituteFrom, overridden by the inline spec.postBuild.substitute
	// (which wins in Flux too).
	Values map[string]string
	// Names are variables that will exist but whose values are not known
	// here: the keys of the substituteFrom ConfigMaps and Secrets that a
	// layer of the stack defines (in the stack's namespace), and the
	// sensitive IaC outputs, which go to the vars Secret. Sorted.
	Names []string
	// Unknown are the substituteFrom sources whose keys cannot be known
	// here: made outside the stack, or a vars entry without an outputs
	// file. A variable that is not provided may come from them.
	Unknown []kustomizev1.SubstituteReference
}

// VarFile is one manifest file, or one built object, of a layer.
type VarFile struct {
	Path  string
	Line  int // line of Path where Data starts
	Data  []byte
	Built bool

	// uses are Data's ${var} uses, found when Lint parsed the manifests
	// (nil when Data has no $), which the default checker reads; Lint
	// leaves a built object's Data empty when only that checker runs.
	uses *substitute.Uses
}

// substituteChecker is the VarChecker Lint uses by default: package
// substitute's Check, errors and warnings (hints are left out).
type substituteChecker struct{}

var _ VarChecker = substituteChecker{}

func (substituteChecker) CheckVars(_ context.Context, l VarLayer) ([]Finding, error) {
	uses := make([]*substitute.Uses, 0, len(l.Files))
	for i, f := range l.Files {
		// Built objects share their file's path: name each by its index to
		// find it again.
		if f.uses == nil {
			continue // no $ in it: nothing to substitute, nothing to check
		}
		u := *f.uses
		u.Path = strconv.Itoa(i)
		uses = append(uses, &u)
	}
	avail := substitute.Available{Values: l.Values, Names: l.Names}
	provided := func(name string) bool {
		_, ok := l.Values[name]
		return ok || slices.Contains(l.Names, name)
	}
	var out []Finding
	for _, sf := range substitute.CheckUses(uses, avail) {
		if sf.Severity == substitute.SeverityHint {
			continue
		}
		if len(l.Unknown) > 0 && sf.Severity == substitute.SeverityError && sf.Var != "" && !provided(sf.Var) {
			continue // it may be a key of a source made outside the stack
		}
		f := Finding{Object: sf.Object, Line: sf.Line, Message: sf.Message}
		if sf.Severity == substitute.SeverityWarning {
			f.Message = "warning: " + f.Message
		}
		if i, err := strconv.Atoi(sf.File); err == nil && i >= 0 && i < len(l.Files) {
			vf := l.Files[i]
			f.File = vf.Path
			if vf.Built {
				f.Line = vf.Line
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// stackVars are the stack's vars entries with what their IaC outputs
// provide, read once per Lint.
type stackVars struct {
	outputs   string            // the outputs file, as the stack file names it
	values    map[string]string // plain outputs: the ConfigMap's data
	sensitive []string          // sensitive outputs: the Secret's keys
	known     bool              // the outputs were read
}

// readVars reads the IaC outputs of every vars entry; an entry whose file
// cannot be read is a finding, and its variables are unknown.
func (l *linter) readVars() map[string]*stackVars {
	out := map[string]*stackVars{}
	for _, name := range l.b.stack.vars {
		out[name] = &stackVars{}
	}
	for _, v := range l.b.vars {
		sv := &stackVars{outputs: v.Outputs}
		out[v.Name] = sv
		if v.Outputs == "" {
			continue
		}
		path := v.Outputs
		if l.b.dir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(l.b.dir, filepath.FromSlash(path))
		}
		outs, err := substitute.ReadOutputs(path)
		if err != nil {
			f := Finding{Rule: RuleVariables, Message: fmt.Sprintf("vars %q: %v", v.Name, err)}
			f.File, f.Line = splitAt(v.at)
			l.add(f)
			continue
		}
		sv.known, sv.values = true, map[string]string{}
		for _, o := range outs.List {
			if o.Sensitive {
				sv.sensitive = append(sv.sensitive, o.Var)
			} else {
				sv.values[o.Var] = o.Value
			}
		}
	}
	return out
}

// checkVariables hands every layer with postBuild to the VarChecker, with
// the variables its substituteFrom sources provide, and reports a source
// made by a layer this one does not depend on (it races the layer).
func (l *linter) checkVariables(ctx context.Context) error {
	if l.cfg.vars == nil {
		return nil
	}
	// substituteFrom sources defined by the stack's own layers.
	type source struct {
		layer string
		keys  []string
	}
	sources := map[string][]source{}
	for _, ly := range l.layers {
		for _, o := range ly.objects {
			if (o.kind == "ConfigMap" || o.kind == "Secret") && o.apiVersion == "v1" {
				ns := o.namespace
				if ns == "" {
					ns = ly.ks.Spec.TargetNamespace
				}
				if ns == l.b.stack.namespace {
					k := o.kind + "/" + o.name
					sources[k] = append(sources[k], source{layer: ly.name, keys: o.data})
				}
			}
		}
	}
	vars := l.readVars()
	for _, ly := range l.layers {
		pb := ly.ks.Spec.PostBuild
		if pb == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		in := VarLayer{Name: ly.name, Files: ly.varFiles, Values: map[string]string{}}
		names := map[string]bool{}
		for _, ref := range pb.SubstituteFrom {
			if ref.Kind != "ConfigMap" && ref.Kind != "Secret" {
				continue // Flux skips other kinds
			}
			if srcs, ok := sources[ref.Kind+"/"+ref.Name]; ok {
				var makers []string
				for _, s := range srcs {
					if s.layer == ly.name || l.isAncestor(ly, s.layer) {
						makers = nil
						break
					}
					makers = append(makers, s.layer)
				}
				if len(makers) > 0 && !ref.Optional {
					f := Finding{Rule: RuleVariables, Layer: ly.name, Message: fmt.Sprintf(
						"substituteFrom %s/%s is created by layer %q, which this layer does not depend on: Flux fails the layer until it exists; depend on %q",
						ref.Kind, ref.Name, makers[0], makers[0])}
					f.File, f.Line = splitAt(ly.at)
					l.add(f)
				}
				for _, s := range srcs {
					for _, k := range s.keys {
						names[k] = true
					}
				}
				continue
			}
			sv, ok := vars[ref.Name]
			switch {
			case ok && sv.known && ref.Kind == "ConfigMap":
				maps.Copy(in.Values, sv.values)
			case ok && sv.known:
				for _, k := range sv.sensitive {
					names[k] = true
				}
			default:
				in.Unknown = append(in.Unknown, ref)
			}
		}
		maps.Copy(in.Values, pb.Substitute)
		for k := range names {
			if _, ok := in.Values[k]; !ok {
				in.Names = append(in.Names, k)
			}
		}
		slices.Sort(in.Names)
		fs, err := l.cfg.vars.CheckVars(ctx, in)
		if err != nil {
			return fmt.Errorf("checking the variables of layer %q: %w", ly.name, err)
		}
		for _, f := range fs {
			f.Rule, f.Layer = RuleVariables, ly.name
			if f.File == "" {
				f.File, f.Line = splitAt(ly.at)
			}
			l.add(f)
		}
	}
	return nil
}
