package layering_test

import (
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fluxpack/fluxpack/layering"
)

func Example() {
	plan, err := layering.New("external-secrets", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Layer("crds", layering.Path("./crds"), layering.KeepOnDelete()).
		Then("operator", layering.Wait(), layering.MarkOperator()).
		Then("crs", layering.DependsOnOperator(), layering.RetryInterval(time.Minute)).
		Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := plan.Files()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		if f.Path == "layers/crs.yaml" {
			fmt.Print(string(f.Data))
		}
	}
	// Output:
	// apiVersion: kustomize.toolkit.fluxcd.io/v1
	// kind: Kustomization
	// metadata:
	//   finalizers:
	//   - finalizers.fluxcd.io
	//   name: crs
	//   namespace: flux-system
	// spec:
	//   deletionPolicy: MirrorPrune
	//   dependsOn:
	//   - name: operator
	//   interval: 10m0s
	//   path: ./crs
	//   prune: true
	//   retryInterval: 1m0s
	//   sourceRef:
	//     kind: OCIRepository
	//     name: external-secrets
	//   timeout: 5m0s
	//   wait: true
}

func ExampleBuilder_Build_errors() {
	_, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Layer("Operator").
		Then("crs", layering.DependsOn("cert-manager")).
		Layer("a", layering.DependsOn("b")).
		Layer("b", layering.DependsOn("a")).
		Build()
	fmt.Println(err)
	fmt.Println(errors.Is(err, layering.ErrInvalidPlan), errors.Is(err, layering.ErrCycle))
	// Output:
	// invalid layer plan: layer "Operator": name must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (a DNS-1123 label of at most 63 characters)
	// layer "crs": depends on unknown layer "cert-manager"
	// layer "a": dependency cycle a -> b -> a
	// true true
}

func ExampleOperator() {
	plan, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Add(layering.Operator("external-secrets",
			layering.OperatorLayer(layering.HelmRelease(layering.ChartRef(helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "external-secrets"}))))).
		Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range plan.Layers {
		ks := l.Kustomization.Spec
		fmt.Printf("%s dependsOn=%v prune=%t wait=%t retry=%s helm=%t\n", l.Name, l.DependsOn, ks.Prune, ks.Wait, ks.RetryInterval.Duration, l.HelmRelease != nil)
	}
	fmt.Println("install.crds:", plan.Layers[1].HelmRelease.Spec.Install.CRDs)
	// Output:
	// external-secrets-crds dependsOn=[] prune=false wait=true retry=2m0s helm=false
	// external-secrets-operator dependsOn=[external-secrets-crds] prune=true wait=true retry=2m0s helm=true
	// external-secrets-crs dependsOn=[external-secrets-operator] prune=true wait=true retry=1m0s helm=false
	// install.crds: Skip
}

// In stock Flux a layer waiting for another is polled every 30s; with
// WakeDependents, notification-controller requests its reconcile the moment
// the other is Ready. The wake Kustomization (wake.yaml) applies the
// objects (wake/) and, once the Receiver is Ready, wakes every layer with
// dependencies once, for the events sent before; the Secret they read is
// applied out of band.
func ExampleWakeDependents() {
	plan, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1"),
		layering.WakeDependents(layering.ReceiverURL("http://webhook-receiver.flux-system.svc.cluster.local."))).
		Layer("crds").
		Then("operator", layering.MarkOperator()).
		Then("crs", layering.DependsOnOperator()).
		Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	w := plan.Wake
	fmt.Println(w.Provider.Kind, w.Provider.Spec.Type, "->", w.Receiver.Kind, w.Receiver.Spec.Type)
	fmt.Println("Kustomization", w.Kustomization.Name, w.Kustomization.Spec.Path)
	fmt.Println(w.Receiver.Spec.ResourceFilter)
	secret, err := w.Secret("", "a-token-of-32-random-characters!")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(secret.Name, string(secret.Data["address"])[:60])
	// Output:
	// Provider generic-hmac -> Receiver generic-hmac
	// Kustomization platform-wake ./flux/wake
	// req.involvedObject.kind == 'Kustomization' && (req.involvedObject.namespace + '/' + req.involvedObject.name == 'flux-system/platform-wake' || (req.involvedObject.namespace + '/' + req.involvedObject.name) in {'flux-system/operator': ['flux-system/crds'], 'flux-system/crs': ['flux-system/operator']}[res.metadata.namespace + '/' + res.metadata.name])
	// platform-wake http://webhook-receiver.flux-system.svc.cluster.local./hook/
}

// A repository's Plan (package fluxrepo reads one) wakes its dependents
// with objects written to a folder of the repository (`fluxpack wake`):
// WakeFor says where the wake Kustomization reads them.
func ExamplePlan_WakeFor() {
	plan := &layering.Plan{Name: "prod", Namespace: "flux-system", Layers: []layering.Layer{
		{Name: "flux-system", Kustomization: kustomization("flux-system", "flux-system")},
		{Name: "infra", Parent: "flux-system", Kustomization: kustomization("infra", "flux-system")},
		{Name: "team-a/apps", Parent: "flux-system", DependsOn: []string{"infra"}, Kustomization: kustomization("apps", "team-a")},
	}}
	w, err := plan.WakeFor(layering.DefaultWakeTarget(plan, "./clusters/prod/wake/objects"))
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := w.Files()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Path)
	}
	fmt.Println(w.Kustomization.Spec.SourceRef.Kind, w.Kustomization.Spec.Path)
	for _, r := range w.Receiver.Spec.Resources {
		fmt.Println("wakes", r.Kind, r.Namespace+"/"+r.Name)
	}
	// Output:
	// kustomization.yaml
	// wake.yaml
	// objects/kustomization.yaml
	// GitRepository ./clusters/prod/wake/objects
	// wakes Kustomization team-a/apps
}

// kustomization is a Kustomization of the flux-system GitRepository.
func kustomization(name, namespace string) *kustomizev1.Kustomization {
	return &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: kustomizev1.KustomizationSpec{SourceRef: kustomizev1.CrossNamespaceSourceReference{
			Kind: "GitRepository", Name: "flux-system", Namespace: "flux-system",
		}},
	}
}

// The critical path and what its dependsOn edges cost in stock Flux,
// which polls a layer's dependencies every --requeue-dependency.
func ExampleCriticalPath_Latency() {
	plan, err := layering.New("platform", layering.FromOCI("oci://registry.example.com/platform", "v1")).
		Layer("namespaces").Then("crds").Then("operator").Then("crs").
		Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	crit := plan.CriticalPath()
	fmt.Println(crit)
	fmt.Println(crit.Edges(), crit.Polling)
	fmt.Println(crit.Latency())
	// Output:
	// critical path: namespaces -> crds -> operator -> crs (4 layers, worst case 20m0s of timeouts)
	// 3 1m30s
	// up to 3 × 30s = 1m30s of dependency polling in stock Flux (--requeue-dependency=30s): kustomize-controller does not watch dependencies, it looks at a layer whose dependsOn is not Ready again only after that long
}
