package layering_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/runtime/cel"
	"github.com/google/cel-go/common/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/layering"
)

// receiverFilter compiles a Receiver's resourceFilter as
// notification-controller v1.9.3 does (internal/server
// receiver_resource_filter.go: fluxcd/pkg/runtime/cel, variables res and
// req, a bool) and returns it as a function of the event's object and the
// resource's namespace and name.
func receiverFilter(t *testing.T, expr string) func(kind, ns, name, resNS, resName string) (bool, error) {
	t.Helper()
	e, err := cel.NewExpression(expr, cel.WithCompile(), cel.WithOutputType(types.BoolType), cel.WithStructVariables("res", "req"))
	require.NoError(t, err, "notification-controller would refuse the filter %s", expr)
	return func(kind, ns, name, resNS, resName string) (bool, error) {
		return e.EvaluateBoolean(t.Context(), map[string]any{
			"res": map[string]any{"apiVersion": kustomizev1.GroupVersion.String(), "kind": "Kustomization",
				"metadata": map[string]any{"namespace": resNS, "name": resName}},
			"req": map[string]any{
				"involvedObject": map[string]any{"apiVersion": kustomizev1.GroupVersion.String(), "kind": kind, "namespace": ns, "name": name},
				"severity":       "info", "message": "Reconciliation finished in 1.2s, next run in 10m0s", "reason": "ReconciliationSucceeded",
			},
		})
	}
}

// TestWakeCannotLoop evaluates the Receiver's resourceFilter of random
// repositories' graphs (cycles, self-dependencies, unknown layers,
// duplicate names, other namespaces) for every event source and every
// resource, as notification-controller evaluates it: a layer's event wakes
// exactly the layers that depend on it directly and are not among its own
// dependencies; it never wakes itself or an ancestor; the wake
// Kustomization's event wakes every resource; no evaluation fails (a
// failure would make the Receiver answer 500 and the Provider retry).
func TestWakeCannotLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 29))
	for i := range 60 {
		n := 2 + rng.IntN(9)
		plan := &layering.Plan{Name: "prod", Namespace: "flux-system"}
		ref := map[string][2]string{} // layer → namespace, name
		for j := range n {
			ns, name := "flux-system", fmt.Sprintf("l%d", j)
			layer := name
			if rng.IntN(4) == 0 {
				ns = "team"
				layer = ns + "/" + name
			}
			ref[layer] = [2]string{ns, name}
			l := layering.Layer{Name: layer, Kustomization: &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}}
			for range rng.IntN(3) {
				switch d := rng.IntN(n + 2); {
				case d == n:
					l.DependsOn = append(l.DependsOn, "missing")
				case d == n+1:
					l.DependsOn = append(l.DependsOn, layer) // itself
				default:
					l.DependsOn = append(l.DependsOn, fmt.Sprintf("l%d", d), "team/"+fmt.Sprintf("l%d", d))
				}
			}
			plan.Layers = append(plan.Layers, l)
		}
		if rng.IntN(3) == 0 { // a duplicate: the first of a name counts
			dup := plan.Layers[0]
			dup.DependsOn = []string{plan.Layers[n-1].Name}
			plan.Layers = append(plan.Layers, dup)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			deps := map[string][]string{} // first of each name, known dependencies only
			for _, l := range plan.Layers {
				if _, seen := deps[l.Name]; seen {
					continue
				}
				deps[l.Name] = slices.DeleteFunc(slices.Clone(l.DependsOn), func(d string) bool { _, ok := ref[d]; return !ok })
			}
			ancestors := func(x string) map[string]bool {
				seen := map[string]bool{}
				stack := slices.Clone(deps[x])
				for len(stack) > 0 {
					y := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					if !seen[y] {
						seen[y] = true
						stack = append(stack, deps[y]...)
					}
				}
				return seen
			}
			target := layering.DefaultWakeTarget(plan, "./wake/objects")
			target.SourceRef = kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "flux-system"}
			w, err := plan.WakeFor(target)
			require.NoError(t, err)
			if w == nil {
				for x, ds := range deps {
					for _, d := range ds {
						assert.True(t, ancestors(d)[x], "no wake objects, yet %s depends on %s outside a cycle", x, d)
					}
				}
				return
			}
			filter := receiverFilter(t, w.Receiver.Spec.ResourceFilter)
			var resources []string
			for _, r := range w.Receiver.Spec.Resources {
				ns := r.Namespace
				if ns == "" {
					ns = w.Receiver.Namespace
				}
				layer := r.Name
				if ns != plan.Namespace {
					layer = ns + "/" + r.Name
				}
				require.Contains(t, ref, layer, "the Receiver names a Kustomization that is no layer")
				resources = append(resources, layer)
			}
			for src := range ref {
				anc := ancestors(src)
				for _, res := range resources {
					woken, err := filter("Kustomization", ref[src][0], ref[src][1], ref[res][0], ref[res][1])
					require.NoError(t, err, "the filter fails for the event of %s and resource %s", src, res)
					want := slices.Contains(deps[res], src) && !ancestors(src)[res]
					assert.Equal(t, want, woken, "event of %s, resource %s (deps %v)", src, res, deps[res])
					if woken {
						assert.NotEqual(t, src, res, "%s wakes itself", src)
						assert.False(t, anc[res], "%s wakes its ancestor %s", src, res)
					}
				}
			}
			for _, res := range resources {
				woken, err := filter("Kustomization", w.Kustomization.Namespace, w.Kustomization.Name, ref[res][0], ref[res][1])
				require.NoError(t, err)
				assert.True(t, woken, "the wake Kustomization's event does not wake %s", res)
				woken, err = filter("HelmRelease", ref[res][0], ref[res][1], ref[res][0], ref[res][1])
				require.NoError(t, err)
				assert.False(t, woken, "another kind's event wakes %s", res)
			}
		})
	}
}
