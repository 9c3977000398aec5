package layering

import "context"

// VarChecker checks the ${var} uses of one layer's manifests against the
// variables the layer makes available (spec.postBuild.substitute keys and
// the keys of its substituteFrom ConfigMaps and Secrets). Package
// substitute provides one; without it Lint skips RuleVariables.
type VarChecker interface {
	CheckVars(ctx context.Context, layer VarLayer) ([]Finding, error)
}

// VarLayer is what a VarChecker gets for one layer.
type VarLayer struct {
	Name string
	// Manifests are the layer's objects as YAML, each with the file (relative
	// to the lint root) and line it comes from.
	Manifests []Manifest
	// Vars are the variable names available to the layer; Complete is false
	// when some substituteFrom source could not be read (an optional one, or
	// a ConfigMap no layer or vars entry defines), so a missing name may be
	// there after all.
	Vars     []string
	Complete bool
}

// Manifest is one object of a layer.
type Manifest struct {
	File string
	Line int
	YAML []byte
}

func (l *linter) checkVariables(ctx context.Context) error {
	if l.cfg.vars == nil {
		return nil
	}
	return nil
}
