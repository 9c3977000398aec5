package fluxrepo

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
)

func resourceSetObject(t *testing.T, doc string) *fluxbuild.Object {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return &fluxbuild.Object{APIVersion: "fluxcd.controlplane.io/v1", Kind: "ResourceSet", Namespace: "apps", Name: "podinfo", File: "apps/rs.yaml", Line: 1, Node: n.Content[0]}
}

func TestExpandResourceSet(t *testing.T) {
	rs := resourceSetObject(t, `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: podinfo, namespace: apps}
spec:
  commonMetadata:
    labels: {app.kubernetes.io/name: podinfo}
  inputs:
    - tenant: team1
      app: {version: "6.7.x", replicas: 2}
    - tenant: Team 2
      app: {version: "6.6.x", replicas: 3}
  resources:
    - apiVersion: source.toolkit.fluxcd.io/v1
      kind: OCIRepository
      metadata: {name: podinfo}
      spec:
        url: oci://ghcr.io/stefanprodan/charts/podinfo
        ref: {semver: "*"}
    - apiVersion: helm.toolkit.fluxcd.io/v2
      kind: HelmRelease
      metadata:
        name: podinfo-<< inputs.tenant | slugify >>
      spec:
        chartRef: {kind: OCIRepository, name: podinfo}
        values:
          replicaCount: << inputs.app.replicas | int >>
          version: << inputs.app.version | quote >>
    - apiVersion: v1
      kind: ServiceAccount
      metadata:
        name: sa-<< inputs.tenant | slugify >>
        annotations:
          fluxcd.controlplane.io/reconcile: << if eq inputs.tenant "team1" >>enabled<< else >>disabled<< end >>
  resourcesTemplate: |
    apiVersion: v1
    kind: Namespace
    metadata:
      name: << inputs.tenant | slugify >>
`)
	objs, err := expandResourceSets([]*fluxbuild.Object{rs})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		data, _ := yaml.Marshal(o.Node)
		got = append(got, o.Kind+"/"+o.Namespace+"/"+o.Name)
		if o.Kind == "HelmRelease" && o.Name == "podinfo-team-2" {
			s := string(data)
			for _, want := range []string{"replicaCount: 3\n", "version: \"6.6.x\"", "app.kubernetes.io/name: podinfo", "namespace: apps"} {
				if !strings.Contains(s, want) {
					t.Errorf("HelmRelease podinfo-team-2 lacks %q:\n%s", want, s)
				}
			}
		}
		if o.File != "apps/rs.yaml" || o.Line != 1 {
			t.Errorf("%s/%s: named by %s:%d, want the ResourceSet's file", o.Kind, o.Name, o.File, o.Line)
		}
	}
	want := []string{
		"OCIRepository/apps/podinfo", "HelmRelease/apps/podinfo-team1", "ServiceAccount/apps/sa-team1", "Namespace//team1",
		"HelmRelease/apps/podinfo-team-2", "Namespace//team-2",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("generated\n%v\nwant\n%v", got, want)
	}

	// Inputs only from providers are not known offline: nothing generated.
	providers := resourceSetObject(t, "spec:\n  inputsFrom: [{kind: ResourceSetInputProvider, name: prs}]\n  resources: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}]\n")
	providers.Kind = "ResourceSet"
	if objs, err := expandResourceSets([]*fluxbuild.Object{providers}); err != nil || len(objs) != 0 {
		t.Errorf("providers only: %v, %v; want nothing", objs, err)
	}
	// A template that does not render names the ResourceSet.
	bad := resourceSetObject(t, "spec:\n  resources: [{apiVersion: v1, kind: ConfigMap, metadata: {name: '<< inputs.nope.deeper >>'}}]\n")
	if _, err := expandResourceSets([]*fluxbuild.Object{bad}); err == nil || !strings.Contains(err.Error(), "ResourceSet/apps/podinfo") {
		t.Errorf("bad template: %v", err)
	}
}

// ExpandResourceSets reads a layer's rendered stream: each ResourceSet is
// expanded on its own and named; one whose inputs come from providers, in
// part or whole, says so, and one whose templates do not render says why.
func TestExpandResourceSetsRendered(t *testing.T) {
	rendered := `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: flux-system}
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: tenants, namespace: flux-system}
spec:
  inputs: [{tenant: a}, {tenant: b}]
  resources:
    - apiVersion: v1
      kind: Namespace
      metadata: {name: << inputs.tenant >>}
    - apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: flux}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: previews}
spec:
  inputs: [{id: "1"}]
  inputsFrom: [{kind: ResourceSetInputProvider, name: prs}]
  resources: [{apiVersion: v1, kind: Namespace, metadata: {name: 'pr-<< inputs.id >>'}}]
---
apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: broken, namespace: apps}
spec:
  resources: [{apiVersion: v1, kind: ConfigMap, metadata: {name: '<< inputs.nope.deeper >>'}}]
`
	gens, err := ExpandResourceSets([]byte(rendered))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range gens {
		names = append(names, g.ResourceSet)
	}
	if want := "ResourceSet/flux-system/tenants ResourceSet/flux-system/previews ResourceSet/apps/broken"; strings.Join(names, " ") != want {
		t.Fatalf("ResourceSets %v, want %s", names, want)
	}
	if gens[0].Err != nil {
		t.Fatalf("tenants: %v", gens[0].Err)
	}
	var got []string
	dec := yaml.NewDecoder(strings.NewReader(string(gens[0].Objects)))
	for {
		var o struct {
			Kind     string `yaml:"kind"`
			Metadata struct{ Name, Namespace string }
		}
		if dec.Decode(&o) != nil {
			break
		}
		got = append(got, o.Kind+"/"+o.Metadata.Namespace+"/"+o.Metadata.Name)
	}
	if want := "Namespace//a RoleBinding/flux-system/flux Namespace//b"; strings.Join(got, " ") != want {
		t.Errorf("tenants generates %v, want %s", got, want)
	}
	if !errors.Is(gens[1].Err, ErrProviderInputs) || gens[1].Objects != nil {
		t.Errorf("previews: %v, %d bytes; want ErrProviderInputs and no objects", gens[1].Err, len(gens[1].Objects))
	}
	if gens[2].Err == nil || gens[2].Objects != nil {
		t.Errorf("broken: %v; want the template's error", gens[2].Err)
	}

	// A layer without ResourceSets has nothing to expand.
	if gens, err := ExpandResourceSets([]byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")); err != nil || gens != nil {
		t.Errorf("no ResourceSet: %v, %v", gens, err)
	}
}
