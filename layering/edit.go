package layering

import (
	"maps"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
)

// This file is the Builder's API for readers of files (package stackfile)
// and for what edits a built stack (package fleet: a cluster's layers off,
// changed or added, its artifact and outputs): where things are declared,
// and edits that keep the builder's rule, never a panic and every problem
// returned by Build.

// DeclaredIn records the stack file the stack is read from: Plan.File, and
// the file problems of its vars entries name.
func DeclaredIn(file string) StackOption {
	return funcStack(func(s *stack) { s.file = file })
}

// RootDir records the directory the stack's layer paths and its vars
// entries' outputs files are relative to (a stack file's directory):
// Plan.Dir and Builder.Dir.
func RootDir(dir string) StackOption {
	return funcStack(func(s *stack) { s.dir = dir })
}

// VarsFrom adds a vars entry, as Vars(e.Name) does, with the IaC outputs
// file its ConfigMap is rendered from (relative to RootDir) and where it
// is declared: Plan.Vars.
func VarsFrom(e VarsEntry) StackOption {
	return funcStack(func(s *stack) {
		n := len(s.vars)
		Vars(e.Name).applyToStack(s)
		if len(s.vars) > n {
			s.varsEntries = append(s.varsEntries, e)
		}
	})
}

// DeclaredAt records where the layer is declared (a stack file and its
// line): its *LayerError and Plan's Layer.File and Line name it.
func DeclaredAt(file string, line int) StepOption {
	return funcStep(func(s *step) { s.file, s.line = file, line })
}

// Prune sets spec.prune (default true); Prune(false) is NoPrune.
func Prune(enabled bool) StepOption {
	return funcStep(func(s *step) { s.prune = &enabled })
}

// SubstituteStrategy sets spec.postBuild.substituteStrategy; Flux knows
// Always only (SubstituteAlways).
func SubstituteStrategy(strategy kustomizev1.SubstituteStrategy) StepOption {
	return funcStep(func(s *step) {
		if strategy != kustomizev1.SubstituteStrategyAlways {
			s.errorf(ErrInvalidOption, "invalid postBuild.substituteStrategy %q: want Always", strategy)
			return
		}
		s.substituteStrategy = strategy
	})
}

// SubstituteDefaults adds postBuild.substitute values the layer does not
// set itself: its own values of the same name win, whenever they are
// given.
func SubstituteDefaults(vars map[string]string) StepOption {
	return funcStep(func(s *step) {
		merged := maps.Clone(vars)
		maps.Copy(merged, s.substitute)
		s.substitute = merged
	})
}

// Dir is the directory the stack's layer paths are relative to (RootDir),
// or "" for a stack not read from a file.
func (b *Builder) Dir() string { return b.stack.dir }

// RenderedPath is where the stack renders its Kustomizations in its
// source (RenderedPath; default ./flux).
func (b *Builder) RenderedPath() string { return b.stack.renderedPath }

// VarsEntries are the stack's vars entries, with their outputs files.
func (b *Builder) VarsEntries() []VarsEntry {
	out := make([]VarsEntry, 0, len(b.stack.vars))
	for _, name := range b.stack.vars {
		v := VarsEntry{Name: name}
		if i := slices.IndexFunc(b.stack.varsEntries, func(e VarsEntry) bool { return e.Name == name }); i >= 0 {
			v = b.stack.varsEntries[i]
		}
		out = append(out, v)
	}
	return out
}

// LayerNames are the names of the stack's layers, in order.
func (b *Builder) LayerNames() []string {
	names := make([]string, len(b.steps))
	for i, s := range b.steps {
		names[i] = s.name
	}
	return names
}

// SetOutputs sets the IaC outputs file of the stack's one vars entry. It
// reports false, changing nothing, unless the stack has exactly one.
func (b *Builder) SetOutputs(file string) bool {
	if len(b.stack.vars) != 1 {
		return false
	}
	e := b.VarsEntries()[0]
	e.Outputs = file
	b.stack.varsEntries = []VarsEntry{e}
	return true
}

// SetArtifact points the stack's own OCIRepository at url,
// oci://HOST/REPOSITORY:TAG (the tag replacing its reference). It reports
// false, changing nothing, when the stack reads another source
// (FromSource) or has none.
func (b *Builder) SetArtifact(url string) bool {
	o := b.stack.oci
	if o == nil {
		return false
	}
	repo, tag := SplitTag(url)
	o.URL = repo
	o.Reference = &sourcev1.OCIRepositoryRef{Tag: tag}
	return true
}

// SplitTag splits oci://HOST/REPOSITORY:TAG into oci://HOST/REPOSITORY and
// TAG ("" when the URL has none).
func SplitTag(url string) (repo, tag string) {
	slash := strings.LastIndex(url, "/")
	if i := strings.LastIndex(url, ":"); i > slash && slash >= 0 {
		return url[:i], url[i+1:]
	}
	return url, ""
}

// EditLayer applies opts to the layer called name, after the options it
// was declared with (its Interval, Timeout or Patches changed, say). It
// reports false, changing nothing, when the stack has no such layer. Bad
// options are recorded, as Layer records them, for Build.
func (b *Builder) EditLayer(name string, opts ...StepOption) bool {
	i := slices.IndexFunc(b.steps, func(s *step) bool { return s.name == name })
	if i < 0 {
		return false
	}
	s := b.steps[i]
	for _, o := range opts {
		if o == nil {
			s.errorf(ErrInvalidOption, "nil StepOption")
			continue
		}
		o.applyToStep(s)
	}
	return true
}

// RemoveLayer takes the layer called name out of the stack; the layers
// that depended on it depend on its dependencies instead (and on the
// operator before it, if it was the one they waited for), so the order
// holds. It reports whether the stack had the layer.
func (b *Builder) RemoveLayer(name string) bool {
	i := slices.IndexFunc(b.steps, func(s *step) bool { return s.name == name })
	if i < 0 {
		return false
	}
	gone := b.steps[i]
	b.steps = slices.Delete(b.steps, i, i+1)
	inherited := slices.Clone(gone.dependsOn)
	if gone.dependsOnOperator {
		// Resolved as Build would: the last operator before it.
		for _, s := range slices.Backward(b.steps[:i]) {
			if s.operator {
				inherited = append(inherited, s.name)
				break
			}
		}
	}
	for _, s := range b.steps {
		j := slices.Index(s.dependsOn, name)
		if j < 0 {
			continue
		}
		s.dependsOn = slices.Delete(s.dependsOn, j, j+1)
		for _, d := range inherited {
			if !slices.Contains(s.dependsOn, d) {
				s.dependsOn = append(s.dependsOn, d)
			}
		}
		delete(s.readyExpr, name)
	}
	return true
}
