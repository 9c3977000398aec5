package fluxpatch_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxpatch"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
)

func fluxPatch(t *testing.T, format fluxpatch.Format, d time.Duration, controllers ...fluxpatch.Controller) []byte {
	t.Helper()
	o := fluxpatch.DefaultOptions()
	o.Format, o.RequeueDependency = format, d
	if len(controllers) > 0 {
		o.Controllers = controllers
	}
	out, err := fluxpatch.Render(o)
	require.NoError(t, err, "Render(%+v)", o)
	return out
}

func TestFluxPatchGolden(t *testing.T) {
	for _, f := range fluxpatch.Formats() {
		testutil.Golden(t, "flux-patch-"+string(f), fluxPatch(t, f, 5*time.Second))
	}
}

// buildArgs builds the flux-system folder of dir as kustomize-controller
// does and returns each controller Deployment's first container's args.
func buildArgs(t *testing.T, dir string) map[string][]string {
	t.Helper()
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "flux-system", Namespace: "flux-system"},
		Spec:       kustomizev1.KustomizationSpec{Path: "./clusters/production/flux-system", Prune: true},
	}
	objs, err := fluxbuild.Build(t.Context(), fluxbuild.Source{Dir: dir}, ks)
	require.NoError(t, err)
	args := map[string][]string{}
	for _, o := range objs {
		if o.Kind != "Deployment" {
			continue
		}
		data, err := yaml.Marshal(o.Node)
		require.NoError(t, err)
		var d appsv1.Deployment
		require.NoError(t, sigyaml.Unmarshal(data, &d), "%s", o)
		args[d.Name] = d.Spec.Template.Spec.Containers[0].Args
	}
	require.Len(t, args, 3, "the three controllers of gotk-components.yaml")
	return args
}

// flux-system laid out as flux bootstrap writes it, gotk-components.yaml and
// gotk-sync.yaml, with kustomization as its kustomization.yaml.
func fluxSystem(t *testing.T, kustomization []byte) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"clusters/production/flux-system/kustomization.yaml": string(kustomization)}
	for _, f := range []string{"gotk-components.yaml", "gotk-sync.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "flux-system", f))
		require.NoError(t, err)
		files["clusters/production/flux-system/"+f] = string(data)
	}
	testutil.WriteFiles(t, dir, files)
	return dir
}

// The bootstrap patch, in flux-system/kustomization.yaml, is applied by
// kustomize-controller's build (package fluxbuild): the controllers' args
// end with the flag, the other controllers are as they were.
func TestFluxPatchBootstrapApplies(t *testing.T) {
	stock := buildArgs(t, fluxSystem(t, []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [gotk-components.yaml, gotk-sync.yaml]\n")))
	patched := buildArgs(t, fluxSystem(t, fluxPatch(t, fluxpatch.Bootstrap, 5*time.Second)))
	for _, c := range []string{"kustomize-controller", "helm-controller"} {
		assert.Equal(t, append(stock[c], "--requeue-dependency=5s"), patched[c], "%s: the flag after the stock args", c)
	}
	assert.Equal(t, stock["source-controller"], patched["source-controller"], "source-controller takes no --requeue-dependency")

	only := buildArgs(t, fluxSystem(t, fluxPatch(t, fluxpatch.Bootstrap, 90*time.Second, fluxpatch.KustomizeController)))
	assert.Equal(t, append(stock["kustomize-controller"], "--requeue-dependency=1m30s"), only["kustomize-controller"])
	assert.Equal(t, stock["helm-controller"], only["helm-controller"])
}

// The FluxInstance's patches are kustomize patches: flux-operator applies
// them to the manifests it generates as kustomize does to
// gotk-components.yaml.
func TestFluxPatchFluxInstanceApplies(t *testing.T) {
	var fi struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name, Namespace string
		} `json:"metadata"`
		Spec struct {
			Kustomize struct {
				Patches []any `json:"patches"`
			} `json:"kustomize"`
		} `json:"spec"`
	}
	require.NoError(t, sigyaml.UnmarshalStrict(fluxPatch(t, fluxpatch.FluxInstance, 2*time.Second), &fi))
	assert.Equal(t, "fluxcd.controlplane.io/v1", fi.APIVersion)
	assert.Equal(t, "FluxInstance", fi.Kind)
	assert.Equal(t, "flux", fi.Metadata.Name, "flux-operator reconciles the FluxInstance named flux")
	require.Len(t, fi.Spec.Kustomize.Patches, 2)
	k, err := sigyaml.Marshal(map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
		"resources": []string{"gotk-components.yaml", "gotk-sync.yaml"}, "patches": fi.Spec.Kustomize.Patches,
	})
	require.NoError(t, err)
	args := buildArgs(t, fluxSystem(t, k))
	for _, c := range []string{"kustomize-controller", "helm-controller"} {
		assert.Equal(t, "--requeue-dependency=2s", args[c][len(args[c])-1], c)
	}
}

// Every bad option is refused, all at once, naming what is wrong.
func TestFluxPatchOptions(t *testing.T) {
	tests := []struct {
		name   string
		change func(*fluxpatch.Options)
		want   []string
	}{
		{"under a second", func(o *fluxpatch.Options) { o.RequeueDependency = 500 * time.Millisecond }, []string{"requeue dependency 500ms: must be at least 1s"}},
		{"zero", func(o *fluxpatch.Options) { o.RequeueDependency = 0 }, []string{"requeue dependency 0s: must be at least 1s"}},
		{"other controller", func(o *fluxpatch.Options) { o.Controllers = []fluxpatch.Controller{"source-controller"} }, []string{`controller "source-controller": only kustomize-controller and helm-controller take --requeue-dependency`}},
		{"twice", func(o *fluxpatch.Options) {
			o.Controllers = []fluxpatch.Controller{fluxpatch.HelmController, fluxpatch.HelmController}
		}, []string{`controller "helm-controller": given twice`}},
		{"none", func(o *fluxpatch.Options) { o.Controllers = nil }, []string{"no controller to patch"}},
		{"format", func(o *fluxpatch.Options) { o.Format = "helm" }, []string{`unknown patch format "helm"`}},
		{"all at once", func(o *fluxpatch.Options) { o.RequeueDependency, o.Format = time.Millisecond, "" }, []string{"requeue dependency 1ms", `unknown patch format ""`}},
	}
	require.NoError(t, fluxpatch.DefaultOptions().Validate())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fluxpatch.DefaultOptions()
			tt.change(&o)
			_, err := fluxpatch.Render(o)
			require.Error(t, err)
			assert.True(t, errors.Is(err, layering.ErrInvalidOption), "errors.Is(%v, ErrInvalidOption)", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, errors.Unwrap(err).Error(), o.Validate().Error(), "Render refuses what Validate reports")
		})
	}
	_, err := fluxpatch.ParseFormat("kustomize")
	assert.ErrorIs(t, err, layering.ErrInvalidOption)
	f, err := fluxpatch.ParseFormat("fluxinstance")
	require.NoError(t, err)
	assert.Equal(t, fluxpatch.FluxInstance, f)
}
