package layering_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/layering"
)

// checkMermaid holds a flowchart to the subset of Mermaid that GitHub's
// renderer accepts and that Graph writes: node ids declared before use,
// labels in double quotes without a double quote inside, edges between
// declared nodes, class and linkStyle naming existing nodes and edges
// (GitHub refuses to render a linkStyle index past the last edge).
func checkMermaid(t *testing.T, g string) {
	t.Helper()
	var (
		nodeRE  = regexp.MustCompile(`^  (n\d+)\["([^"]*)"\]$`)
		edgeRE  = regexp.MustCompile(`^  (n\d+) --> (n\d+)$`)
		classRE = regexp.MustCompile(`^  class ([n\d,]+) critical$`)
		linkRE  = regexp.MustCompile(`^  linkStyle ([\d,]+) stroke:#[0-9a-f]{6},stroke-width:\dpx$`)
	)
	lines := strings.Split(strings.TrimSuffix(g, "\n"), "\n")
	require.Equal(t, "flowchart LR", lines[0])
	nodes := map[string]bool{}
	edges := 0
	for _, line := range lines[1:] {
		switch {
		case nodeRE.MatchString(line):
			m := nodeRE.FindStringSubmatch(line)
			assert.False(t, nodes[m[1]], "node %s declared twice", m[1])
			nodes[m[1]] = true
			assert.NotContains(t, m[2], "\"")
		case edgeRE.MatchString(line):
			m := edgeRE.FindStringSubmatch(line)
			assert.True(t, nodes[m[1]] && nodes[m[2]], "edge between undeclared nodes: %s", line)
			edges++
		case line == "  classDef critical stroke:#d73a49,stroke-width:3px":
		case classRE.MatchString(line):
			for _, n := range strings.Split(classRE.FindStringSubmatch(line)[1], ",") {
				assert.True(t, nodes[n], "class names undeclared node %s", n)
			}
		case linkRE.MatchString(line):
			for _, s := range strings.Split(linkRE.FindStringSubmatch(line)[1], ",") {
				i, err := strconv.Atoi(s)
				require.NoError(t, err)
				assert.Less(t, i, edges, "linkStyle %d past the last edge", i)
			}
		case strings.HasPrefix(line, "%% "):
			assert.NotContains(t, line, "\n")
		default:
			t.Errorf("line GitHub's Mermaid may not render: %q", line)
		}
	}
}

func TestGraphMermaidForGitHub(t *testing.T) {
	tests := []struct {
		name string
		b    *layering.Builder
		want []string // lines the graph must hold
	}{
		{"single", layering.New("s", layering.FromOCI(registry, "v1")).Layer("only"),
			[]string{`  n0["only<br/>Kustomization, wait"]`, "  class n0 critical"}},
		{"independent", layering.New("s", layering.FromOCI(registry, "v1")).Layer("a").Layer("b"),
			[]string{"  class n0 critical"}},
		{"diamond", layering.New("s", layering.FromOCI(registry, "v1")).
			Layer("a").Then("b").Layer("c", layering.DependsOn("a")).Layer("d", layering.DependsOn("c", "b")),
			[]string{"  n0 --> n1", "  n2 --> n3", "  n1 --> n3", "  class n0,n2,n3 critical", "  linkStyle 1,2 stroke:#d73a49,stroke-width:3px"}},
		{"operator-preset", layering.New("s", layering.FromOCI(registry, "v1")).
			Add(layering.Operator("es", layering.OperatorLayer(layering.HelmRelease(layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "es"}))))),
			[]string{`  n1["es-operator<br/>HelmRelease, wait, operator"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := tt.b.Build()
			require.NoError(t, err)
			g, err := plan.Graph(layering.GraphMermaid)
			require.NoError(t, err)
			checkMermaid(t, string(g))
			for _, w := range tt.want {
				assert.Contains(t, strings.Split(string(g), "\n"), w, "in:\n%s", g)
			}
		})
	}
}

// The critical path's latency: up to --requeue-dependency per edge in
// stock Flux, one event per edge when the stack wakes its dependents; every
// format says it under the critical path.
func TestCriticalPathLatency(t *testing.T) {
	build := func(opts ...layering.StackOption) *layering.Plan {
		plan, err := layering.New("platform", append([]layering.StackOption{layering.FromOCI(registry, "v1")}, opts...)...).
			Layer("namespaces").Then("crds").Then("operator").Then("crs").
			Build()
		require.NoError(t, err)
		return plan
	}
	polled := build().CriticalPath()
	assert.Equal(t, 3, polled.Edges())
	assert.Equal(t, 3*layering.DefaultRequeueDependency, polled.Polling)
	assert.False(t, polled.Woken)
	assert.Contains(t, polled.Latency(), "up to 3 × 30s = 1m30s of dependency polling in stock Flux (--requeue-dependency=30s)")

	plan := build(layering.WakeDependents())
	woken := plan.CriticalPath()
	assert.True(t, woken.Woken)
	assert.Equal(t, 3*layering.DefaultRequeueDependency, woken.Polling, "the polling is still what a lost event costs")
	assert.Contains(t, woken.Latency(), "dependents are woken by events (wake): each of the 3 dependsOn edges costs one event through notification-controller, not up to 30s of dependency polling")
	for _, f := range layering.GraphFormats() {
		g, err := plan.Graph(f)
		require.NoError(t, err)
		assert.Contains(t, string(g), "woken by events", "format %s", f)
	}

	single, err := layering.New("platform", layering.FromOCI(registry, "v1")).Layer("apps").Build()
	require.NoError(t, err)
	assert.Equal(t, "no dependsOn edge on the critical path: no dependency polling", single.CriticalPath().Latency())
}

// Every drawing of a Plan ends, on random graphs with cycles, self-loops,
// duplicate names, unknown dependencies and wide fan-out: a Plan read
// from a repository can have all of them (Build refuses them, lint reports
// them), and graph must still draw it. The critical path is no longer
// than the Plan.
// The tree reads in bootstrap order: the layers that depend on none at
// the top, each layer in full under the dependency it waits for last and
// named under the others; a dependency the platform lacks and a cycle no
// root reaches are roots of their own, marked.
func TestGraphTree(t *testing.T) {
	p := &layering.Plan{Name: "s", Namespace: "flux-system"}
	for _, l := range []struct {
		name string
		deps []string
	}{
		{"a", nil}, {"b", []string{"a"}}, {"c", []string{"a"}}, {"d", []string{"c", "b"}},
		{"e", []string{"x"}},
		{"h", []string{"f"}}, {"f", []string{"g"}}, {"g", []string{"f"}},
	} {
		p.Layers = append(p.Layers, layering.Layer{Name: l.name, DependsOn: l.deps, Kustomization: &kustomizev1.Kustomization{}})
	}
	p.Layers[1].HelmRelease = &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "flux-system"}}
	out, err := p.Graph(layering.GraphTree)
	require.NoError(t, err)
	tree, _, _ := strings.Cut(string(out), "\n\ncritical path")
	assert.Equal(t, `Kustomization/flux-system/a
├── Kustomization/flux-system/b
│   ├── HelmRelease/flux-system/b
│   └── Kustomization/flux-system/d (drawn under c)
└── Kustomization/flux-system/c
    └── Kustomization/flux-system/d

Kustomization/flux-system/x (not in the platform)
└── Kustomization/flux-system/e

Kustomization/flux-system/f (in a dependency cycle)
├── Kustomization/flux-system/h
└── Kustomization/flux-system/g
    └── Kustomization/flux-system/f (see above)`, tree)
}

func TestGraphOfAnyPlanEnds(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 1 + r.IntN(60)
		p := &layering.Plan{Name: "random", Namespace: "flux-system"}
		for i := range n {
			name := fmt.Sprintf("l%d", i)
			if i > 0 && r.IntN(15) == 0 {
				name = p.Layers[r.IntN(i)].Name // a duplicate
			}
			var deps []string
			fanOut := 4
			if r.IntN(10) == 0 {
				fanOut = n // a layer that depends on nearly everything
			}
			for range r.IntN(fanOut + 1) {
				switch j := r.IntN(n + 2); {
				case j == n:
					deps = append(deps, "unknown")
				case j == n+1:
					deps = append(deps, name) // a self-loop
				default:
					deps = append(deps, fmt.Sprintf("l%d", j)) // forwards too: cycles
				}
			}
			p.Layers = append(p.Layers, layering.Layer{Name: name, DependsOn: deps, Kustomization: &kustomizev1.Kustomization{}})
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if c := p.CriticalPath(); len(c.Layers) > n {
				t.Errorf("seed %d: the critical path of %d layers has %d: %v", seed, n, len(c.Layers), c.Layers)
			}
			for _, f := range layering.GraphFormats() {
				out, err := p.Graph(f)
				if err != nil {
					t.Errorf("seed %d: graph %s: %v", seed, f, err)
				}
				if len(out) == 0 {
					t.Errorf("seed %d: graph %s is empty", seed, f)
				}
			}
			_ = p.Problems()
		}()
		// A loop is what go test's timeout is for; this names the seed a
		// little before it kills the binary. No shorter limit: a cold
		// -race run on a loaded machine is slow.
		var limit <-chan time.Time
		if deadline, ok := t.Deadline(); ok {
			limit = time.After(time.Until(deadline) - 20*time.Second)
		}
		select {
		case <-done:
		case <-limit:
			t.Fatalf("seed %d: drawing a plan of %d layers did not end before the test's deadline: a loop?", seed, n)
		}
	}
}
