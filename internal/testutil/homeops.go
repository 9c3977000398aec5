package testutil

import (
	"fmt"
	"strings"
)

// HomeOps is a repository GenerateHomeOps wrote: its entry point (the
// folder of the Kustomization that applies every app) and the files the
// benchmarks change.
type HomeOps struct {
	Entry string // kubernetes/flux/cluster
	// Release is one app's HelmRelease, whose image tag a renovate-style
	// change bumps.
	Release string
	// Unread are files no Flux layer reads: a CI workflow and the README.
	Unread []string
}

// GenerateHomeOps writes into dir a repository shaped like the home-ops
// repositories people publish from onedr0p's cluster template: under
// kubernetes/, a cluster entry (flux/cluster/ks.yaml: Kustomization
// cluster-apps, path ./kubernetes/apps, with patches every app
// Kustomization gets), then apps/<namespace>/ with a kustomization.yaml
// listing the namespace and each app's ks.yaml; each app is a Flux
// Kustomization (path app/, a shared component, postBuild APP, some
// dependsOn) whose folder holds a HelmRelease (chartRef to an
// OCIRepository, values with an image, a controller, a service, a route and
// persistence), the OCIRepository and a kustomization.yaml; every third app
// has an ExternalSecret. Beside kubernetes/ are what such repositories keep
// there too: a README, a CI workflow, a Taskfile and a renovate config.
// namespaces × apps apps are written; the content is the same on every run.
func GenerateHomeOps(dir string, namespaces, apps int) (*HomeOps, error) {
	files := map[string]string{
		"README.md":                    "# home-ops\n\nMy home cluster, managed by Flux.\n",
		".github/workflows/flate.yaml": "name: flate\non: [pull_request]\njobs:\n  diff:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v6\n",
		".github/renovate.json5":       "{\n  extends: [\"config:recommended\"],\n}\n",
		"Taskfile.yaml":                "version: '3'\ntasks:\n  reconcile:\n    cmds: [flux reconcile ks cluster-apps --with-source]\n",
		"kubernetes/flux/cluster/ks.yaml": `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cluster-apps
  namespace: flux-system
spec:
  interval: 1h
  path: ./kubernetes/apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  decryption:
    provider: sops
    secretRef:
      name: sops-age
  patches:
    - # Every app Kustomization gets these defaults.
      patch: |-
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: _
        spec:
          deletionPolicy: WaitForTermination
          decryption:
            provider: sops
            secretRef:
              name: sops-age
      target:
        group: kustomize.toolkit.fluxcd.io
        kind: Kustomization
`,
		"kubernetes/components/common/kustomization.yaml": `---
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - ./alerts.yaml
`,
		"kubernetes/components/common/alerts.yaml": `---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata:
  name: ${APP}
spec:
  providerRef:
    name: alert-manager
  eventSeverity: error
  eventSources:
    - kind: HelmRelease
      name: ${APP}
`,
	}
	h := &HomeOps{Entry: "kubernetes/flux/cluster", Unread: []string{"README.md", ".github/workflows/flate.yaml"}}
	for n := range namespaces {
		ns := fmt.Sprintf("ns-%02d", n)
		nsDir := "kubernetes/apps/" + ns
		resources := []string{"./namespace.yaml"}
		files[nsDir+"/namespace.yaml"] = fmt.Sprintf("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
		for a := range apps {
			app := fmt.Sprintf("app-%02d-%02d", n, a)
			resources = append(resources, "./"+app+"/ks.yaml")
			appDir := nsDir + "/" + app
			depends := ""
			if a > 0 && a%4 == 0 {
				depends = fmt.Sprintf("  dependsOn:\n    - name: app-%02d-%02d\n      namespace: %s\n", n, a-1, ns)
			}
			files[appDir+"/ks.yaml"] = fmt.Sprintf(`---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app %[1]s
  namespace: %[2]s
spec:
  commonMetadata:
    labels:
      app.kubernetes.io/name: *app
  components:
    - ../../../../components/common
%[3]s  interval: 1h
  path: ./kubernetes/apps/%[2]s/%[1]s/app
  postBuild:
    substitute:
      APP: *app
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  targetNamespace: %[2]s
  timeout: 5m
  wait: false
`, app, ns, depends)
			res := []string{"./helmrelease.yaml", "./ocirepository.yaml"}
			if a%3 == 0 {
				res = append(res, "./externalsecret.yaml")
				files[appDir+"/app/externalsecret.yaml"] = `---
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: ${APP}
spec:
  secretStoreRef:
    kind: ClusterSecretStore
    name: onepassword
  target:
    name: ${APP}-secret
  dataFrom:
    - extract:
        key: ${APP}
`
			}
			files[appDir+"/app/kustomization.yaml"] = "---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + strings.Join(res, "\n  - ") + "\n"
			files[appDir+"/app/ocirepository.yaml"] = fmt.Sprintf(`---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: %s
spec:
  interval: 15m
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
  ref:
    tag: 4.6.2
  url: oci://ghcr.io/bjw-s-labs/helm/app-template
`, app)
			release := appDir + "/app/helmrelease.yaml"
			if h.Release == "" && n == namespaces/2 && a == apps/2 {
				h.Release = release
			}
			files[release] = fmt.Sprintf(`---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %[1]s
spec:
  chartRef:
    kind: OCIRepository
    name: %[1]s
  interval: 1h
  values:
    controllers:
      %[1]s:
        annotations:
          reloader.stakater.com/auto: "true"
        containers:
          app:
            image:
              repository: ghcr.io/home-operations/%[1]s
              tag: 1.%[2]d.0@sha256:%064[2]x
            env:
              TZ: Europe/Paris
              PORT: &port 8080
            probes:
              liveness: &probes
                enabled: true
                custom: true
                spec:
                  httpGet:
                    path: /healthz
                    port: *port
              readiness: *probes
            securityContext:
              allowPrivilegeEscalation: false
              readOnlyRootFilesystem: true
              capabilities: {drop: ["ALL"]}
            resources:
              requests:
                cpu: 10m
              limits:
                memory: 512Mi
    defaultPodOptions:
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        runAsGroup: 1000
    service:
      app:
        ports:
          http:
            port: *port
    route:
      app:
        hostnames: ["{{ .Release.Name }}.home.example.com"]
        parentRefs:
          - name: envoy-internal
            namespace: network
    persistence:
      config:
        existingClaim: %[1]s
      tmp:
        type: emptyDir
`, app, n*100+a)
		}
		files[nsDir+"/kustomization.yaml"] = fmt.Sprintf("---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - %s\n",
			ns, strings.Join(resources, "\n  - "))
	}
	files["kubernetes/apps/kustomization.yaml"] = homeOpsApps(namespaces)
	for name, content := range files {
		if err := writeFile(dir, name, content); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// homeOpsApps is kubernetes/apps/kustomization.yaml: every namespace's
// folder.
func homeOpsApps(namespaces int) string {
	var b strings.Builder
	b.WriteString("---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for n := range namespaces {
		fmt.Fprintf(&b, "  - ./ns-%02d\n", n)
	}
	return b.String()
}
