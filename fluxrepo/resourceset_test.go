package fluxrepo

import (
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
