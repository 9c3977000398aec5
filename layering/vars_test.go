package layering_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/layering"
)

// namesChecker stands in for package substitute: it reports each ${var}
// the layer does not make available, so the test sees what Lint handed it.
type namesChecker struct{ got []layering.VarLayer }

var ref = regexp.MustCompile(`\$\{([_a-zA-Z][_a-zA-Z0-9]*)\}`)

func (c *namesChecker) CheckVars(_ context.Context, l layering.VarLayer) ([]layering.Finding, error) {
	c.got = append(c.got, l)
	var out []layering.Finding
	for _, f := range l.Files {
		for i, line := range bytes.Split(f.Data, []byte("\n")) {
			for _, m := range ref.FindAllSubmatch(line, -1) {
				name := string(m[1])
				if _, ok := l.Values[name]; ok || slices.Contains(l.Names, name) {
					continue
				}
				line := f.Line + i
				if f.Built {
					line = f.Line
				}
				out = append(out, layering.Finding{File: f.Path, Line: line, Message: fmt.Sprintf("variable %q is not set", name)})
			}
		}
	}
	return out, nil
}

func TestLintVariables(t *testing.T) {
	files := map[string]string{
		"vars/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\n  namespace: flux-system\ndata:\n  domain: example.com\n",
		"apps/gw.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gw\n  namespace: default\ndata:\n  host: \"*.${domain}\"\n  name: ${cluster_name}\n",
		"kapps/kustomization.yaml": "resources: [gw.yaml]\n",
		"kapps/gw.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gw\n  namespace: default\ndata:\n  host: \"*.${domain}\"\n",
	}
	inline := layering.Substitute(map[string]string{"cluster_name": "c1"})
	from := layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "cluster-vars"})
	tests := []struct {
		name string
		b    *layering.Builder
		want []string // findings, as file:line: message
	}{
		{"inline-only", stack().Layer("vars", layering.Path("./vars")).Then("apps", layering.Path("./apps"), inline),
			[]string{`apps/gw.yaml:7: variable "domain" is not set`}},
		{"from-only", stack().Layer("vars", layering.Path("./vars")).Then("apps", layering.Path("./apps"), from),
			[]string{`apps/gw.yaml:8: variable "cluster_name" is not set`}},
		{"both", stack().Layer("vars", layering.Path("./vars")).Then("apps", layering.Path("./apps"), inline, from), nil},
		{"kustomized", stack().Layer("vars", layering.Path("./vars")).Then("kapps", layering.Path("./kapps"), inline),
			[]string{`kapps/gw.yaml:1: variable "domain" is not set`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &namesChecker{}
			dir := t.TempDir()
			writeTree(t, dir, files)
			rep, err := layering.Lint(t.Context(), tt.b, dir, layering.WithVarChecker(c))
			require.NoError(t, err)
			var got []string
			for _, f := range rep.Findings {
				require.Equal(t, layering.RuleVariables, f.Rule, "%s", f)
				got = append(got, fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message))
			}
			assert.Equal(t, tt.want, got)
			require.Len(t, c.got, 1, "only layers with postBuild are checked")
		})
	}
}

func TestLintVariablesUnresolved(t *testing.T) {
	c := &namesChecker{}
	b := layering.New("platform", layering.FromOCI(registry, "v1"), layering.Vars("cluster-vars")).
		Layer("apps", layering.Path("./apps"), layering.SubstituteFrom(
			kustomizev1.SubstituteReference{Kind: "Secret", Name: "maybe", Optional: true}))
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"apps/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n"})
	_, err := layering.Lint(t.Context(), b, dir, layering.WithVarChecker(c))
	require.NoError(t, err)
	require.Len(t, c.got, 1)
	assert.Equal(t, []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "cluster-vars"}}, c.got[0].Unresolved,
		"the vars ConfigMap is left to the checker; the optional Secret is not")
}
